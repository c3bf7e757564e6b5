"""Reading: the projection, the tree views (memory, SQL), the queries and the renderings."""
