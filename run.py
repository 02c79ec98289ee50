"""``python run.py [overrides]`` / ``python run.py -m key=a,b ...`` in a checkout: the
same as the installed ``rffbench`` command (:mod:`rffbench.cli`)."""
import rffbench  # noqa: F401  (sets thread-pool env defaults before numpy loads)
from rffbench.cli import main

if __name__ == "__main__":
    main()
