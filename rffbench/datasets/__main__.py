"""python -m rffbench.datasets fetch NAME: get a fetched dataset's files
(rffbench.datasets.fetched)."""
import sys

from .fetched import main

sys.exit(main())
