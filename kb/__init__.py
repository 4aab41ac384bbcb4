"""``kb``: a client command for a project's knowledge base over the pages API.

``kb export`` / ``kb import`` sync a whole base with a plain folder (the specification's
"Sync with a folder"); ``kb get``, ``kb put``, ``kb ls`` and ``kb history`` are the
one-page shorthands. It talks HTTP with httpx like any client and may import the layer's
pure page functions (paths, frontmatter, lint); the layer never imports it.
"""
