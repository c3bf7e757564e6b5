"""The installed hook: append the host's payload to its store's inbox, durably, and leave.

Run as ``PYTHON -S /path/to/lineage_es/hook_fast.py HOST [--store URL]`` (what
:func:`lineage_es.hook_command.command_line` builds): a script, not a module of the package,
so nothing of ``lineage_es`` is imported (not its ``__init__``, not eventsourcing, click or
orjson): only its siblings :mod:`~lineage_es.inbox_append` and :mod:`~lineage_es.user_files`,
found first on ``sys.path`` (this script's folder), which import only modules built into the
interpreter. What it does is :mod:`lineage_es.inbox_append`'s to say; this script stays a few
lines, since a script's bytecode is never cached.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lineage_es import inbox_append
else:
    import inbox_append

if __name__ == "__main__":
    inbox_append.main(sys.argv[1:])
