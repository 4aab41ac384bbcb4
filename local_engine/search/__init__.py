"""Search: the reads over what ingestion stored (full-text search, statements, evidence, sources) and
the read routes.
"""
