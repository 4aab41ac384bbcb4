"""Exports: archives of a knowledge base in the contract's three formats, built in the background."""
