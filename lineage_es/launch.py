"""The ``lineage`` command's entry point: ``lineage hook`` starts without loading click.

A host runs ``lineage hook`` on every event, so its process time is the hook's cost; click's
import alone is a third of a hook's budget. Every other command, and ``lineage hook --help``,
goes through the click application in :mod:`lineage_es.cli.main`.

Python's last collections at exit walk every object the command made, which the system frees
anyway when the process ends: the objects are frozen out of them (an import of a few
thousand observations exits 40 ms sooner). What must run at exit still runs: stores are
closed by the commands themselves, and ``atexit`` handlers run before the freeze.
"""

from __future__ import annotations

import atexit
import gc
import sys


def main() -> None:
    atexit.register(gc.freeze)  # registered first, so it runs after every other handler
    args = sys.argv[1:]
    if len(args) > 1 and args[0] == "hook" and not {"-h", "--help"} & set(args):
        from lineage_es.hook import run_process

        run_process(args[1:])
    from lineage_es.cli.main import main as cli_main

    cli_main()
