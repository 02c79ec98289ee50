"""rffbench entry point: ``python run.py [overrides]`` or ``python run.py -m key=a,b ...``.

Thin on purpose: the config is composed by Hydra from conf/, the work is
done by :func:`rffbench.experiment.main`.  A single run writes its records
into the Hydra run directory; in a multirun each run's records go to
``SWEEP/runs/<run_id>/`` (rffbench.store): a failing job does not stop the
sweep (its ``error.txt``), runs already recorded are skipped (resume), and
the callback (rffbench.launch.RffbenchCallback) checks the output directory
before Hydra writes into it and reports the sweep at the end.  Ctrl-C stops
with one line (exit 130); the interrupted run is resumable.
"""
import logging
import sys

import rffbench  # noqa: F401  (sets thread-pool env defaults before numpy loads)
import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

import rffbench.config  # noqa: F401  (registers the structured config schema)

# a log file on a full disk must not print "--- Logging error ---" tracebacks
logging.raiseExceptions = False


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg):
    from rffbench.experiment import main as run_main
    from rffbench.launch import threads_per_job

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN:
        return run_main(cfg, hc.runtime.output_dir, sweep_dir=hc.sweep.dir,
                        jobs_threads=threads_per_job(hc.launcher),
                        overrides=list(hc.overrides.task))
    code = run_main(cfg, hc.runtime.output_dir)
    if code:
        sys.exit(code)
    return code


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as exc:
        from rffbench.experiment import Interrupted

        if not isinstance(exc, Interrupted):  # outside a run: say it here
            print("rffbench: interrupted (a sweep resumes when the same command runs again)",
                  file=sys.stderr)
        sys.exit(130)
