"""``python run.py [overrides]`` / ``python run.py -m key=a,b ...`` in a checkout: the
same as the installed ``rffbench`` command (:mod:`rffbench.cli`, loaded by
:mod:`rffbench.entry`: Ctrl-C while it loads is one line)."""
import rffbench  # noqa: F401  (sets thread-pool env defaults before numpy loads)
from rffbench.entry import rffbench as main

if __name__ == "__main__":
    main()
