"""Aggregate ids: stable across machines and versions, so every journal keeps its roots."""

from __future__ import annotations

from uuid import NAMESPACE_URL, uuid5

from lineage_es.domain.ids import NAMESPACE, index_id, ledger_id, name_id, root_id


def test_the_namespace_is_the_uuid5_of_the_projects_url() -> None:
    assert uuid5(NAMESPACE_URL, "https://lineage-es.dev/ids") == NAMESPACE


def test_a_name_id_is_the_uuid5_of_the_name_in_the_namespace() -> None:
    for name in ("", "root\x00claude\x00abc", "conversation\x00cursor\x00é☃", "x" * 10_000):
        assert name_id(name) == uuid5(NAMESPACE, name)


def test_root_index_and_ledger_ids_are_those_every_earlier_journal_used() -> None:
    assert str(root_id("claude", "s1")) == str(uuid5(NAMESPACE, "root\x00claude\x00s1"))
    assert index_id("codex", "t1") == uuid5(NAMESPACE, "conversation\x00codex\x00t1")
    assert ledger_id("claude", "/p") == uuid5(NAMESPACE, "import-ledger\x00claude\x00/p")
