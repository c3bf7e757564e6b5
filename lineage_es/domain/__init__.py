"""The domain: the rules of lineage, pure (no I/O, no view, no clock but a fact's time)."""
