"""The conversation index: which root each conversation belongs to, and its events.

Its events live here, at module level under explicit topics, as the root's live in
:mod:`lineage_es.domain.events`: an index entry is an aggregate of its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from lineage_es.domain.ids import index_id


class IndexEvent(Aggregate.Event):
    """An event of a :class:`ConversationIndex` entry."""


class IndexCreated(IndexEvent, Aggregate.Created):
    """A conversation is routed to ``root``."""

    TOPIC = "lineage:ConversationIndex.Indexed"
    host: str
    conversation: str
    root: str


class IndexMoved(IndexEvent):
    """The conversation now belongs to ``root`` (a wrong binding was undone)."""

    TOPIC = "lineage:ConversationIndex.Moved"
    root: str

    def apply(self, aggregate: Any) -> None:
        aggregate.root = self.root


class ConversationIndex(Aggregate):
    """Routes a conversation to the root it belongs to; saved with the root it names."""

    TOPIC = "lineage:ConversationIndex"

    Event = IndexEvent
    Created = IndexCreated
    Moved = IndexMoved

    def __init__(self, host: str, conversation: str, root: str) -> None:
        self.host = host
        self.conversation = conversation
        self.root = root

    @classmethod
    def create(cls, host: str, conversation: str, root: str, at: datetime) -> ConversationIndex:
        return cls._create(
            cls.Created,
            id=index_id(host, conversation),
            host=host,
            conversation=conversation,
            root=root,
            timestamp=at,
        )

    def move(self, root: str, at: datetime) -> None:
        if root != self.root:
            self.trigger_event(self.Moved, root=root, timestamp=at)
