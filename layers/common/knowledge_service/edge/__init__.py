"""The edge: the HTTP resolvers, access rules and renderers of each surface's wire shape, and
the handlers of what EventBridge invokes (``bus/``)."""
