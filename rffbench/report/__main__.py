"""``python -m rffbench.report SWEEP_DIR``: see :mod:`rffbench.report`."""
import sys

from . import main

sys.exit(main())
