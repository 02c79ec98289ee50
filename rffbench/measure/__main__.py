"""``python -m rffbench.measure --serve``: a timing worker process of the pool
(:class:`rffbench.measure.workers.WorkerPool`): a task's path per line on stdin, one JSON
line per task on stdout (:func:`rffbench.measure.workers.serve`)."""
import sys

from rffbench.measure.workers import serve

if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: python -m rffbench.measure --serve (the timing pool's worker: task "
                 "paths on stdin)")
    serve()
