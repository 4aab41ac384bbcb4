"""Knowledge the engine derives and curates: people and organizations, disagreements, and a person's
decisions on them.
"""
