"""The `lineage` command: thin click commands over the library."""
