"""Writing a command's answer to standard output, all of it or an error.

A single ``write`` to a file or pipe may write less than it was given (Linux writes at most
2,147,479,552 bytes at once), and Python's buffered stream hands that short count back rather
than write on: ``click.echo`` of a larger text stopped there and the command exited 0 with its
output cut. This writes in bounded pieces and goes on from wherever each one stopped; a write
that fails (a full disk, a closed file) is the command's failure, with its reason. A reader
that stops reading (``| head``) raises :class:`BrokenPipeError`, which the commands'
:func:`~lineage_es.cli.common.reports_errors` turns into a quiet exit 0, as before.
"""

from __future__ import annotations

import sys

from lineage_es.cli.common import CommandFailed

#: The most one write is given: well under any system's limit on one write.
PIECE_BYTES = 1 << 20


def write_out(data: bytes) -> None:
    """Write ``data`` to standard output, all of it, and flush it: :class:`CommandFailed`
    (exit status 2) when the output cannot take it."""
    try:
        sys.stdout.flush()  # what was echoed before goes first
        stream = sys.stdout.buffer
        view = memoryview(data)
        while view:
            written = stream.write(view[:PIECE_BYTES])
            if not written:
                raise CommandFailed(
                    f"cannot write the output: standard output took none of the "
                    f"{len(view)} bytes left"
                )
            view = view[written:]
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise CommandFailed(f"cannot write the output: {exc.strerror or exc}") from None
