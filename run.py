"""rffbench entry point: ``python run.py [overrides]`` or ``python run.py -m key=a,b ...``.

Thin on purpose: the config is composed by Hydra from conf/, the work is
done by :func:`rffbench.experiment.main`, records go to the Hydra run (or
job) directory.
"""
import sys

import rffbench  # noqa: F401  (sets thread-pool env defaults before numpy loads)
import hydra
from hydra.core.hydra_config import HydraConfig

import rffbench.config  # noqa: F401  (registers the structured config schema)


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg):
    from rffbench.experiment import main as run_main

    code = run_main(cfg, HydraConfig.get().runtime.output_dir)
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
