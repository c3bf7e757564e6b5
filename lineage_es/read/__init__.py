"""Reading: the public answerer (``answers``: :class:`TreeReader`) and its argument checks
(``arguments``); the projection (``projection``, over ``decoding`` and ``row_changes``); the
tree views (``view``: memory, ``sqlview``: SQL); the ``queries`` over them; ``render``."""
