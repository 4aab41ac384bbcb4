"""The demo knowledge bases: the documents in this folder, read by the pipeline like any other."""
