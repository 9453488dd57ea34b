"""Claim verification service (seed 000 mode 2)."""
