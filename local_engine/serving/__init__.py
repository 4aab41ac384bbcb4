"""Serving: the HTTP server, the router, the API port's routes, multipart bodies, the change feed and
the engine's state.
"""
