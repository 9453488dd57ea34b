"""Greek letters as notation: the one rule `science` (protected spans) and `vocabulary` (the
allow-list) both read, kept below both so neither imports the other for it."""

from __future__ import annotations

_GREEK_RANGES = ((0x0370, 0x03FF), (0x1F00, 0x1FFF))


def is_greek(char: str) -> bool:
    code = ord(char)
    return char == "\u00b5" or any(lo <= code <= hi for lo, hi in _GREEK_RANGES)


def greek_notation(token: str) -> bool:
    """A token whose Greek letters are notation: mixed with Latin letters or digits (IFN-γ, αvβ8,
    β-blockers, µL), or at most three Greek letters alone (γδ, κ). A Greek word is not."""
    greek = sum(1 for c in token if is_greek(c))
    if not greek:
        return False
    other = sum(1 for c in token if (c.isalnum() and not is_greek(c)))
    if other:
        return True
    return greek == 1 or (greek <= 3 and token.islower())  # "ΤΚ" is a Greek label, "γδ" notation
