"""``python -m rffbench.bench``: the benchmarks' command line (rffbench.bench.cli)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
