"""PubMed through NCBI E-utilities: `esearch` for ranked PMIDs, then `efetch` (PubMed XML with
abstracts) or `esummary` (JSON, no abstract) for the records. Ids are `pmid:<PMID>`.

Retraction status comes from the record itself: the publication type `Retracted Publication`
or a `RetractionIn` comment/correction marks a retracted article (`metadata.retracted`); a
`Retraction of Publication` record is the notice itself (`metadata.retraction_notice`).
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from research_connector.errors import MalformedPayload
from research_connector.sources.base import clean_text, json_body
from research_connector.sources.eutils import (
    EutilsSource,
    date_params,
    parse_esearch,
    partial_date,
    year_of,
)
from research_contracts import SourceHit, TaskFilters

RETRACTED_TYPES = {"retracted publication"}
NOTICE_TYPES = {"retraction of publication"}


def _text(node: Element | None) -> str:
    return clean_text("".join(node.itertext())) if node is not None else ""


def _authors(article: Element) -> list[str]:
    names = []
    for author in article.findall("./AuthorList/Author"):
        collective = author.findtext("CollectiveName")
        if collective:
            names.append(clean_text(collective))
            continue
        last, fore = (
            author.findtext("LastName"),
            author.findtext("ForeName") or author.findtext("Initials"),
        )
        if last:
            names.append(f"{fore} {last}".strip() if fore else last)
    return names


def parse_pubmed_article(node: Element) -> SourceHit:
    """One `<PubmedArticle>` as a hit (ids from `PubmedData/ArticleIdList`, not the references)."""
    citation = node.find("MedlineCitation")
    if citation is None:
        raise MalformedPayload("PubmedArticle without MedlineCitation")
    pmid = (citation.findtext("PMID") or "").strip()
    if not pmid:
        raise MalformedPayload("PubmedArticle without PMID")
    article = citation.find("Article")
    if article is None:
        raise MalformedPayload(f"PubmedArticle {pmid} without Article")
    ids = {
        (n.get("IdType") or "").lower(): (n.text or "").strip()
        for n in node.findall("./PubmedData/ArticleIdList/ArticleId")
    }
    doi = ids.get("doi") or next(
        (
            (n.text or "").strip()
            for n in article.findall("ELocationID")
            if n.get("EIdType") == "doi"
        ),
        None,
    )
    pub_date = article.find("./Journal/JournalIssue/PubDate")
    year, when = (None, None)
    if pub_date is not None:
        year, when = partial_date(
            pub_date.findtext("Year"), pub_date.findtext("Month"), pub_date.findtext("Day")
        )
        year = year or year_of(pub_date.findtext("MedlineDate"))
    sections = []
    for part in article.findall("./Abstract/AbstractText"):
        label, text = part.get("Label"), _text(part)
        sections.append(f"{label}: {text}" if label else text)
    types = [clean_text(t.text) for t in article.findall("./PublicationTypeList/PublicationType")]
    lowered = {t.lower() for t in types}
    retraction_in = [
        c
        for c in citation.findall("./CommentsCorrectionsList/CommentsCorrections")
        if c.get("RefType") == "RetractionIn"
    ]
    return SourceHit(
        source_id=f"pmid:{pmid}",
        source="pubmed",
        title=_text(article.find("ArticleTitle")),
        authors=_authors(article),
        venue=clean_text(article.findtext("./Journal/Title")) or None,
        year=year,
        date=when,
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        abstract=" ".join(sections),
        doi=doi or None,
        metadata={
            "pmid": pmid,
            "pmcid": ids.get("pmc"),
            "publication_types": types,
            "retracted": bool(lowered & RETRACTED_TYPES) or bool(retraction_in),
            "retraction_notice": bool(lowered & NOTICE_TYPES),
            "keywords": [clean_text(k.text) for k in citation.findall("./KeywordList/Keyword")],
            "mesh_terms": [
                clean_text(d.text)
                for d in citation.findall("./MeshHeadingList/MeshHeading/DescriptorName")
            ],
            "status": citation.get("Status"),
        },
    )


def parse_efetch(body: bytes) -> list[SourceHit]:
    """Every `<PubmedArticle>` of an efetch PubMed XML answer, in document order."""
    root = ElementTree.fromstring(body)  # noqa: S314 - expat (>= 2.4.1) caps entity expansion; ElementTree fetches no external entity
    if root.tag != "PubmedArticleSet":
        raise MalformedPayload(f"unexpected efetch root <{root.tag}>")
    return [parse_pubmed_article(node) for node in root.findall("PubmedArticle")]


def parse_esummary(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits from an esummary JSON answer (no abstracts), in the order of `result.uids`."""
    result = payload["result"]
    hits = []
    for uid in result["uids"]:
        doc = result[str(uid)]
        ids = {a.get("idtype"): a.get("value") for a in doc.get("articleids", [])}
        types = list(doc.get("pubtype", []))
        lowered = {t.lower() for t in types}
        hits.append(
            SourceHit(
                source_id=f"pmid:{doc['uid']}",
                source="pubmed",
                title=clean_text(doc.get("title")),
                authors=[a["name"] for a in doc.get("authors", []) if a.get("name")],
                venue=doc.get("fulljournalname") or doc.get("source") or None,
                year=year_of(doc.get("pubdate")) or year_of(doc.get("sortpubdate")),
                url=f"https://pubmed.ncbi.nlm.nih.gov/{doc['uid']}/",
                doi=ids.get("doi") or None,
                metadata={
                    "pmid": str(doc["uid"]),
                    "pmcid": ids.get("pmc"),
                    "publication_types": types,
                    "retracted": bool(lowered & RETRACTED_TYPES),
                    "retraction_notice": bool(lowered & NOTICE_TYPES),
                    "pubdate": doc.get("pubdate"),
                },
            )
        )
    return hits


class PubMedSource(EutilsSource):
    """PubMed (E-utilities); 3 requests/s without a key, 10 with `CONNECTOR__PUBMED__API_KEY`."""

    name = "pubmed"
    db = "pubmed"
    prefix = "pmid:"

    async def _records(self, uids: list[str]) -> list[SourceHit]:
        if not uids:
            return []
        if self.settings.detail == "summary":
            response = await self._eutils("esummary", id=",".join(uids), retmode="json")
            return parse_esummary(json_body(response))
        response = await self._eutils("efetch", id=",".join(uids), retmode="xml")
        hits = {hit.source_id: hit for hit in parse_efetch(response.content)}
        return [hits[f"pmid:{p}"] for p in uids if f"pmid:{p}" in hits]

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        response = await self._eutils(
            "esearch",
            term=query,
            retmax=limit,
            retmode="json",
            sort="relevance",
            **date_params(filters),
        )
        return await self._records(parse_esearch(response.content))
