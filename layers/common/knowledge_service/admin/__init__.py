"""The operator's command: projects, principals, tokens and roles (``knowledge-admin``)."""
