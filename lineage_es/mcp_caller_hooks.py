"""Whether the hooks the ``lineage mcp`` server needs to tell who called it are installed
where the host runs them, and what to say when they are not.

Which hooks a host needs, and whether one hook config runs them, is
its adapter's (``mcp_caller_hooks``) and :mod:`lineage_es.hook_config`'s
(:func:`~lineage_es.hook_config.missing_mcp_hooks`). This module adds where a host reads its
hooks for a server of a given scope: a user-scope server runs in every project, so only the
user's hook config serves it; a project-scope server runs in its project, where the host runs
the user's hooks and the project's both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lineage_es.hook_config import (
    HookConfigError,
    Scope,
    config_path,
    missing_mcp_hooks,
)
from lineage_es.hosts import adapter
from lineage_es.vocabulary import HOSTS


@dataclass(frozen=True, slots=True)
class MissingHooks:
    """The hooks ``host`` needs for the server that it would not run: ``events``."""

    host: str
    events: tuple[str, ...]
    scope: Scope
    #: Whether ``lineage install-hooks`` adds them all (else no command of ours does).
    installable: bool

    def advice(self) -> str:
        """What is missing, why it matters, and the command that installs it."""
        names = " and ".join(self.events)
        what = f"the {adapter(self.host).display_name} {names} hook"
        what += "s are" if len(self.events) > 1 else " is"
        if self.host == "claude":
            what = what.replace(" hook is", " hook for mcp__ tools is")
        why = "so the lineage server cannot tell which conversation calls it"
        if not self.installable:
            return f"{what} not installed ({why}), and `lineage install-hooks` does not add them"
        scope = " --scope project" if self.scope == "project" else ""
        return (
            f"{what} not installed ({why}): run `lineage install-hooks {self.host}{scope}` "
            "(or install-mcp --with-hooks)"
        )


def missing_caller_hooks(
    host: str, scope: Scope = "user", *, cwd: Path | None = None, server: str = "lineage"
) -> MissingHooks | None:
    """The hooks ``host`` must run for a server named ``server`` configured in ``scope``
    that it would not; ``None`` when none is needed or all are there. A hook config that
    cannot be read counts as running none (``install-hooks`` says what is wrong with it)."""
    needed = adapter(host).mcp_caller_hooks if host in HOSTS else ()
    if not needed:
        return None
    scopes: tuple[Scope, ...] = ("user",) if scope == "user" else ("user", "project")
    missing = set(needed)
    for where in scopes:
        try:
            missing &= set(missing_mcp_hooks(host, config_path(host, where, cwd=cwd), server))
        except HookConfigError:
            continue
    if not missing:
        return None
    events = tuple(event for event in needed if event in missing)
    installable = set(events) <= set(adapter(host).hook_events)
    return MissingHooks(host, events, scope, installable)
