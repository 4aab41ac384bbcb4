"""The engine's store: one SQLite database (WAL, FTS5) that holds every record the engine makes."""
