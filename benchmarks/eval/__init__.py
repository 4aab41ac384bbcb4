"""`make eval`: a scored evaluation of retrieval over two public documentation sets.

The engine (``POST /api/projects/{ref}/retrieve``) and two baselines a user builds in an hour
(SQLite FTS5 and bm25s over blank-line paragraphs) answer the same questions over the same files;
each is scored hit@1, hit@5 and MRR per kind of question (docs/evaluation.md).
"""
