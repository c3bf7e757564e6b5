"""The ``lineage`` command's entry point: ``lineage hook`` starts without loading click.

A host runs ``lineage hook`` on every event, so its process time is the hook's cost; click's
import alone is a third of a hook's budget. Every other command, and ``lineage hook --help``,
goes through the click application in :mod:`lineage_es.cli.main`, whose objects are left out
of Python's collections at exit (:func:`~lineage_es.collector.skip_collections_at_exit`: an
import of a few thousand observations exits 40 ms sooner; a hook makes too few objects for
that to be worth an import on its path).
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if len(args) > 1 and args[0] == "hook" and not {"-h", "--help"} & set(args):
        from lineage_es.hook import run_process

        run_process(args[1:])
    from lineage_es.cli.main import main as cli_main
    from lineage_es.collector import skip_collections_at_exit

    skip_collections_at_exit()
    cli_main()
