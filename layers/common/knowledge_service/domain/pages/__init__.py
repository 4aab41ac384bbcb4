"""The knowledge base pages of a project: paths, frontmatter, links, the tree and the write path.

Every rule here is a plain function of its input (no storage, no HTTP) except ``service``,
which composes them with the page store: REST, the brain tools and the ``kb`` command can
all import the path canonicaliser, the frontmatter reader and lint as they are.
"""
