"""Whether this run is a CI's, for what a CI must never do (rewrite its own expectations).

``CI`` is what CI services set (``CI=true``); a person who unsets it by hand often writes
``CI=``, ``CI=0`` or ``CI=false``, and means "not CI": those are read as not set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Values of ``CI`` that say "not CI" (compared without case or surrounding spaces).
NOT_CI = frozenset({"", "0", "false"})


def running_in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``CI`` is set to anything but empty, ``0`` or ``false``."""
    value = environ.get("CI")
    return value is not None and value.strip().lower() not in NOT_CI
