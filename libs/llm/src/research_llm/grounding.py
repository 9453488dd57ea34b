"""Quote verification: a support survives only if its quote occurs in the cited source's text.

The researcher runs this on every draft before persisting it (remote models paraphrase; the
offline engine never does). Dropped supports are counted so the service can audit them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from research_contracts import Support
from research_llm.schema import ClaimDraft, EvidenceDoc


@dataclass(slots=True)
class GroundedSupports:
    """The supports that passed, and why the others were dropped."""

    kept: list[Support] = field(default_factory=list)
    unknown_source: int = 0
    quote_not_found: int = 0

    @property
    def dropped(self) -> int:
        return self.unknown_source + self.quote_not_found


def ground_supports(draft: ClaimDraft, evidence: list[EvidenceDoc]) -> GroundedSupports:
    """Keep each support whose source is in `evidence` and whose quote is in its text.

    Whitespace runs are compared collapsed, so a quote that only differs in line breaks is kept
    (with the source's own spelling of it). Duplicate (source, quote) pairs are kept once.
    """
    docs = {doc.source_id: doc for doc in evidence}
    result = GroundedSupports()
    seen: set[tuple[str, str]] = set()
    for support in draft.supports:
        doc = docs.get(support.source_id)
        if doc is None:
            result.unknown_source += 1
            continue
        quote = _locate(support.quote, doc.text)
        if quote is None:
            result.quote_not_found += 1
            continue
        if (doc.source_id, quote) in seen:
            continue
        seen.add((doc.source_id, quote))
        result.kept.append(
            Support(source_id=doc.source_id, title=doc.title, quote=quote, locator=support.locator)
        )
    return result


def _locate(quote: str, text: str) -> str | None:
    """The exact substring of `text` that `quote` denotes, or None."""
    quote = quote.strip()
    if not quote:
        return None
    if quote in text:
        return quote
    words = quote.split()
    if not words:
        return None
    import re

    pattern = r"\s+".join(re.escape(w) for w in words)
    match = re.search(pattern, text)
    return match.group(0) if match else None
