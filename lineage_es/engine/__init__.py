"""The engine: the eventsourcing application, the unit of work, routing, the front door."""
