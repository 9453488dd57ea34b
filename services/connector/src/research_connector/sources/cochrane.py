"""Cochrane Library reviews through the publisher JSON client (bearer key, 5 requests/s).

Ids are `doi:` (every Cochrane review has a DOI). Each hit carries its `review_type`
(intervention, diagnostic test accuracy, prognosis, overview, methodology, qualitative…), and
the answer counts the review types found (`EvidenceFound.facets["cochrane"]["review_type"]`)
so a caller sees at a glance whether the evidence is interventional or diagnostic.
"""

from __future__ import annotations

from collections import Counter

from research_connector.sources.publisher import PublisherSource
from research_contracts import SourceHit


def count_review_types(hits: list[SourceHit]) -> dict[str, int]:
    """How many hits of each review type (`unknown` when the record does not say)."""
    counted = Counter(
        str(hit.metadata.get("review_type") or "unknown").strip().lower() for hit in hits
    )
    return dict(sorted(counted.items()))


class CochraneSource(PublisherSource):
    """Cochrane systematic reviews, with the review types counted."""

    name = "cochrane"

    def facets(self, hits: list[SourceHit]) -> dict[str, dict[str, int]]:
        return {"review_type": count_review_types(hits)} if hits else {}
