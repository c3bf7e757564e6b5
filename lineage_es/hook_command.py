"""The command a host runs for every hook event: the fast hook, as a script.

``command_line(host, store)`` is ``[PYTHON, "-S", ".../lineage_es/hook_fast.py", HOST]`` (and
``--store URL`` when one is given): ``-S`` skips the ``site`` import and the script imports
nothing of the package, so the hook costs a host little more than the interpreter's start-up
(:mod:`lineage_es.hook_fast`). ``lineage install-hooks`` writes it
(:mod:`lineage_es.hook_config`). Cheap to import: no eventsourcing, no click.
"""

from __future__ import annotations

import os
import sys

#: The fast hook's script, beside this module.
HOOK_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook_fast.py")


def command_line(host: str, store: str | None, python: str | None = None) -> list[str]:
    """The argv of the fast hook for ``host`` journaling into ``store`` (``None``: the
    default store, or ``$LINEAGE_STORE`` as the host's environment sets it), run by
    ``python`` (default: this interpreter)."""
    argv = [python or sys.executable, "-S", HOOK_SCRIPT, host]
    if store:
        argv += ["--store", store]
    return argv
