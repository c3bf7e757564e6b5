"""``python -m lineage_es``: the ``lineage`` command, for an environment whose scripts folder
is not on ``PATH`` (the same entry point, so ``python -m lineage_es hook`` stays click-free)."""

from lineage_es.launch import main

if __name__ == "__main__":
    main()
