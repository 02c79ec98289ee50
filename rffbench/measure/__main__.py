"""``python -m rffbench.measure --serve``: a timing worker process of the pool
(:class:`rffbench.measure.workers.WorkerPool`): a task's path per line on stdin, one JSON
line per task on stdout (:func:`rffbench.measure.workers.serve`).
``python -m rffbench.measure TASK``: one task, one JSON line."""
import json
import sys

from rffbench.measure.workers import serve, worker

if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        print(json.dumps(worker(sys.argv[1])))
