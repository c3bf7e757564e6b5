"""Files gone from a history folder: how many (:func:`count_gone`) and, with ``--reconcile``,
deleting as ``gc`` the conversations no file on disk holds any more (:func:`reconcile`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_es.errors import UnknownConversation
from lineage_es.importers.report import ImportReport
from lineage_es.importers.walk import in_listed_folder

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.importers.ledger import Ledger
    from lineage_es.model import AgentLineage

#: Every file that holds a conversation: what that file owns, and whether it is on disk.
Holders = dict[str, list[tuple[Any, bool]]]


def count_gone(ledger: Ledger, present: set[str], report: ImportReport) -> None:
    """How many files the ledger knows are gone from disk (those in folders that could not be
    listed may well be there)."""
    report.gone = sum(
        1 for rel in ledger.files if rel not in present and in_listed_folder(rel, report.unlisted)
    )


def reconcile(
    engine: Engine,
    ledger: Ledger,
    present: set[str],
    report: ImportReport,
    *,
    moved_to: Sequence[Path] = (),
) -> None:
    """Delete, as ``gc``, each conversation every file holding it is gone from disk,
    journaled like any delete (so ``family()`` stops listing it); then drop the gone files
    from the ledger.

    A ledger entry's ``owns`` lists the conversations the file speaks for (its own rows:
    a session, an agent, a Codex thread and its continuations) and the children it names by
    their spawns. A file speaks for a conversation unless it also owns that conversation's
    parent. A file still on disk holds a conversation it speaks for, and one it only names
    that no file speaks for (a child with no transcript of its own): so a Codex thread stays
    while a continuation file remains, and a Claude agent whose own file is gone is deleted
    though its session's file, which names it, remains. A delete takes the subtree below
    (``parent-teardown``): a session whose own file is gone goes with its agents, even when
    their files remain (Claude Code's cleanup leaves ``subagents/`` behind). Deepest first,
    so each conversation of a gone file is recorded as ``gc`` itself.

    Files of the host's other imported folders hold conversations too, when still on disk:
    Codex archives a thread by moving its rollout to another folder, which is no delete.
    A gone file whose name lies in such a folder, not imported from there yet, holds what
    it held until it is; so does one whose name lies in a folder of ``moved_to`` (where the
    host's importer knows the host moves files), imported or not.
    """
    report.reconciled = True
    unlisted = report.unlisted
    gone = [rel for rel in ledger.files if rel not in present and in_listed_folder(rel, unlisted)]
    if not gone:
        return
    engine.catch_up()
    holders = _holders(ledger, gone, present, report, moved_to)
    doomed: list[tuple[int, str]] = []
    for conversation, held in holders.items():
        node = _standing(engine, conversation, ledger.host)
        if node is None:
            continue
        speakers = [h for h in held if node.parent not in h[0]]
        holding = speakers or held  # a child no file speaks for is held by those naming it
        if any(on_disk for _, on_disk in holding):
            report.kept.append(conversation)
        else:
            doomed.append((node.depth, conversation))
    doomed.sort(key=lambda item: (-item[0], item[1]))
    for _, conversation in doomed:
        if _standing(engine, conversation, ledger.host) is None:
            continue  # taken with a parent already (depths can disagree with the files)
        before = engine.position()
        try:
            engine.delete(conversation, "gc", host=ledger.host)
        except UnknownConversation:
            continue
        report.deleted.append(conversation)
        for event in engine.journal(before):
            state = event.state
            if event.topic.endswith(".Deleted") and state.get("reason") == "parent-teardown":
                report.cascaded.append(str(state.get("conversation") or state.get("spawn_key")))
    taken = set(report.cascaded)
    report.kept = [conversation for conversation in report.kept if conversation not in taken]
    ledger.forget(gone)


def _holders(
    ledger: Ledger,
    gone: list[str],
    present: set[str],
    report: ImportReport,
    moved_to: Sequence[Path],
) -> Holders:
    """Each conversation of a ``gone`` file with every file that holds it, here or in another
    folder of the host: what that file owns, and whether it is still on disk."""
    files = ledger.files
    unlisted = report.unlisted
    others = ledger.other_folders()
    places = [*others, *((str(folder), {}) for folder in moved_to)]
    moved = {rel for rel in gone if _moved_to(rel, places)}
    holders: Holders = {}
    for rel in gone:
        for conversation in files[rel].get("owns") or ():
            holders.setdefault(conversation, [])
    for rel, entry in files.items():
        owns = entry.get("owns") or ()
        here = rel in present or rel in moved or not in_listed_folder(rel, unlisted)
        for conversation in owns:
            if conversation in holders:
                holders[conversation].append((owns, here))
    for folder, entries in others:
        for rel, entry in entries.items():
            owns = entry.get("owns") or ()
            wanted = [conversation for conversation in owns if conversation in holders]
            if wanted:
                there = _on_disk(os.path.join(folder, *rel.split("/")))
                for conversation in wanted:
                    holders[conversation].append((owns, there))
    return holders


def _standing(engine: Engine, conversation: str, host: str) -> AgentLineage | None:
    """The lineage of ``conversation`` while it stands in the tree; ``None`` when it is
    unknown or deleted (a deleted node's lineage has no tree)."""
    try:
        lineage = engine.lineage(conversation, host)
    except UnknownConversation:
        return None
    return lineage if lineage.tree is not None else None


def _moved_to(rel: str, others: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether a file of that name lies in another imported folder, at the same path or at
    its top (``archived_sessions`` is flat), though not imported from there yet: until it
    is, it is taken to hold what the gone file held."""
    name = rel.rsplit("/", 1)[-1]
    return any(
        _on_disk(os.path.join(folder, name)) or _on_disk(os.path.join(folder, *rel.split("/")))
        for folder, _ in others
    )


def _on_disk(path: str) -> bool:
    """Whether ``path`` exists; a path that cannot be looked at (a folder without search
    permission) counts as there: only a file known gone lets its conversations go."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True
