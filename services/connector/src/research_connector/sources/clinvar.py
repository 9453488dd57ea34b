"""ClinVar through NCBI E-utilities (`esearch` + `esummary` JSON). Ids are `clinvar:<variation id>`.

The clinical significance is carried in `metadata.clinical_significance` (the germline
classification of current records, or the older `clinical_significance` block), with the review
status, the genes and the conditions (`traits`). ClinVar shares PubMed's NCBI budget.
"""

from __future__ import annotations

from typing import Any

from research_connector.settings import ClinVarSettings
from research_connector.sources.base import clean_text, json_body
from research_connector.sources.eutils import EutilsSource, parse_esearch, year_of
from research_contracts import SourceHit, TaskFilters


def _classification(doc: dict[str, Any]) -> dict[str, Any]:
    for key in ("germline_classification", "clinical_significance"):
        block = doc.get(key)
        if isinstance(block, dict) and block.get("description"):
            return block
    return {}


def parse_clinvar_summary(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits from a ClinVar esummary JSON answer, in the order of `result.uids`."""
    result = payload["result"]
    hits = []
    for uid in result["uids"]:
        doc = result[str(uid)]
        significance = _classification(doc)
        traits = [
            clean_text(trait.get("trait_name"))
            for trait in (significance.get("trait_set") or doc.get("trait_set") or [])
            if isinstance(trait, dict) and trait.get("trait_name")
        ]
        genes = [
            g.get("symbol") for g in doc.get("genes", []) if isinstance(g, dict) and g.get("symbol")
        ]
        accession = doc.get("accession") or ""
        last_evaluated = significance.get("last_evaluated") or ""
        title = clean_text(doc.get("title"))
        hits.append(
            SourceHit(
                source_id=f"clinvar:{doc.get('uid', uid)}",
                source="clinvar",
                title=title,
                venue="ClinVar",
                year=year_of(last_evaluated),
                url=f"https://www.ncbi.nlm.nih.gov/clinvar/variation/{doc.get('uid', uid)}/",
                abstract="; ".join(
                    part
                    for part in (
                        title,
                        f"clinical significance: {significance.get('description')}"
                        if significance
                        else "",
                        f"conditions: {', '.join(traits)}" if traits else "",
                    )
                    if part
                ),
                metadata={
                    "accession": accession,
                    "variant_type": doc.get("obj_type"),
                    "clinical_significance": significance.get("description"),
                    "review_status": significance.get("review_status"),
                    "last_evaluated": last_evaluated or None,
                    "genes": genes,
                    "traits": traits,
                },
            )
        )
    return hits


class ClinVarSource(EutilsSource):
    """ClinVar variants (E-utilities); same key and budget as PubMed."""

    name = "clinvar"
    db = "clinvar"
    prefix = "clinvar:"
    settings: ClinVarSettings

    async def _records(self, uids: list[str]) -> list[SourceHit]:
        if not uids:
            return []
        response = await self._eutils("esummary", id=",".join(uids), retmode="json")
        return parse_clinvar_summary(json_body(response))

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        response = await self._eutils("esearch", term=query, retmax=limit, retmode="json")
        return await self._records(parse_esearch(response.content))
