"""Who is calling: principals, their permissions and roles, and bearer tokens."""
