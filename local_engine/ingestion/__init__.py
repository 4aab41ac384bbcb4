"""Ingestion: jobs through the eleven stages, the converters that read each format, the text's chunks
and statements, and the worker processes.
"""
