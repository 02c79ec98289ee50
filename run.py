"""rffbench entry point: ``python run.py [overrides]`` or ``python run.py -m key=a,b ...``.

Thin on purpose: the config is composed by Hydra from conf/, the work is
done by :func:`rffbench.experiment.main`, records go to the Hydra run (or
job) directory.  In a multirun, a failing job does not stop the sweep (it
leaves ``error.txt`` in its job directory), jobs already recorded in the
sweep directory are skipped (resume), and the report callback
(rffbench.report.ReportCallback) summarises the sweep at the end.
"""
import sys

import rffbench  # noqa: F401  (sets thread-pool env defaults before numpy loads)
import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

import rffbench.config  # noqa: F401  (registers the structured config schema)


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg):
    from rffbench.experiment import main as run_main
    from rffbench.launch import threads_per_job

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN:
        return run_main(cfg, hc.runtime.output_dir, sweep_dir=hc.sweep.dir,
                        jobs_threads=threads_per_job(hc.launcher))
    code = run_main(cfg, hc.runtime.output_dir)
    if code:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
