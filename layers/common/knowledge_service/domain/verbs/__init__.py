"""The ``knowledge.*`` verbs: evidence-gated assertions behind one front door (spec 003)."""
