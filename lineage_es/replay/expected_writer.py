"""Writing an expected file (``lineage-replay --update``): what was observed, as readable and
stable YAML, keeping the hand-written ``views`` of the file it replaces (their conversations,
keys and item shapes) with refreshed values."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from lineage_es.model import AgentLineage, LineageTree, to_json
from lineage_es.replay.expected import TREE_KEYS, Expected, lineage_data, tree_data, tree_ids


def refresh_view(want: Mapping[str, Any] | None, tree: LineageTree | None) -> Any:
    """A hand-written view rewritten with what was observed: the same keys, and list items in the
    same shape (ids, or mappings of the peer fields the author chose), refreshed values."""
    if tree is None:
        return None
    if not want:
        return tree_ids(tree)
    got = tree_data(tree)
    out: dict[str, Any] = {}
    for key in TREE_KEYS:
        if key not in want:
            continue
        fields: list[str] = []
        for item in want[key]:
            if isinstance(item, dict):
                fields.extend(k for k in item if k not in fields)
        if not fields:
            out[key] = [p["conversation"] for p in got[key]]
            continue
        keys = ["conversation", *(f for f in fields if f != "conversation")]
        out[key] = [_FlowMap({k: p.get(k) for k in keys}) for p in got[key]]
    return out


class _FlowMap(dict[str, Any]):
    """A mapping written on one line (a peer in a list)."""


class _Dumper(yaml.SafeDumper):
    """Readable, stable YAML: nested lists indented, short lists of ids on one line, and any
    string a YAML reader could take for something else quoted."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def check_simple_key(self) -> bool:
        # A double-quoted id escapes its newlines, so it stays a one-line key (`"a\nb": null`)
        # instead of PyYAML's complex-key form.
        event = self.event
        if isinstance(event, yaml.ScalarEvent) and event.style == '"' and not event.anchor:
            return len(event.value) < 128
        return bool(super().check_simple_key())


_NUMBERISH = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$|^0[xob]")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if not data.isprintable() or "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    if _NUMBERISH.match(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_str(data)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    flow = all(not isinstance(item, (dict, list)) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_flow_map(dumper: yaml.SafeDumper, data: _FlowMap) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(_FlowMap, _represent_flow_map)


def dump_expected(document: Mapping[str, Any], transcript: str) -> str:
    """The YAML text of an expected file, with a header saying how to regenerate it."""
    header = (
        f"# Expected lineage for {transcript}, written by lineage-replay --update.\n"
        "# Hand-written `views` are kept; comments are not. Check with --assert.\n"
    )
    body = yaml.dump(
        dict(document),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )
    return header + body


def updated_document(
    answers: Mapping[int, AgentLineage | None],
    views: Mapping[int, Mapping[str, LineageTree | None]],
    final_views: Mapping[str, LineageTree | None] | None,
    *,
    host: str | None,
    existing: Expected | None,
) -> dict[str, Any]:
    """The expected file ``--update`` writes: a step at every row where the requester's lineage
    or tree changed since that requester's previous answer, plus the existing file's views
    (same conversations and keys, observed values) at their rows and in ``final``."""
    wanted_views: dict[int, dict[str, Any]] = {}
    for step in existing.steps if existing is not None else ():
        for row in step.rows if step.views else ():
            wanted_views.setdefault(row, {}).update(step.views)
    previous: dict[tuple[str | None, str], Any] = {}
    steps: list[dict[str, Any]] = []
    for row in sorted(set(answers) | set(wanted_views)):
        entry: dict[str, Any] = {}
        lineage = answers.get(row)
        if lineage is not None:
            key = (lineage.host, lineage.conversation)
            current = to_json(lineage)
            if previous.get(key) != current:
                entry = {"lineage": lineage_data(lineage), "tree": tree_ids(lineage.tree)}
            previous[key] = current
        if row in wanted_views:
            entry["views"] = {
                conversation: refresh_view(want, views[row][conversation])
                for conversation, want in wanted_views[row].items()
            }
        if entry:
            steps.append({"row": row, **entry})
    document: dict[str, Any] = {"version": 1}
    if host is not None:
        document["host"] = host
    document["steps"] = steps
    if existing is not None and existing.final_views is not None and final_views is not None:
        document["final"] = {
            "views": {
                conversation: refresh_view(want, final_views[conversation])
                for conversation, want in existing.final_views.items()
            }
        }
    return document


__all__ = ["dump_expected", "refresh_view", "updated_document"]
