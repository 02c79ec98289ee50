"""``python -m rffbench.measure TASK``: one timing worker process
(:func:`rffbench.measure.workers.worker`): one JSON line on stdout."""
import json
import sys

from rffbench.measure.workers import worker

if __name__ == "__main__":
    print(json.dumps(worker(sys.argv[1])))
