"""The HTTP edge: resolvers, access rules, and the renderers of each surface's wire shape."""
