"""One router per route group; each function includes the routers of its group."""
