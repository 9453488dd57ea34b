"""A paper's card: what is known of one source and every report that cites it.

    GET /api/research/v1/papers/corpus:4983
    GET /api/research/v1/papers/pmid:22351513

A corpus paper (`corpus:<id>`, the corpus tools' id) is read from the corpus: title, authors,
year, venue, DOI and abstract. Any other paper (a PubMed, arXiv, DOI or other outside hit) has
no row of its own: its card holds what its source gave, as the citing reports' references kept
it (title, authors, year, venue, DOI, URL, and the text the author read). Either way the card
lists the reports whose current version cites the paper, with the sentences quoted from it, and
links out where it can: the DOI, the PubMed record, the arXiv page, or the source's own http(s)
URL. 404 when the corpus does not hold the paper and no report cites it.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, status
from pydantic import BaseModel
from sqlalchemy import select

from research_contracts.corpus_tools import CORPUS_PREFIX, corpus_id
from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, Reading
from research_gateway.storable import STORABLE, TEXT_QUERY
from research_gateway.study import study_of
from research_ledger import UnitOfWork
from research_platform.tables import CorpusPaper

router = APIRouter(
    prefix=API,
    tags=["reports"],
    dependencies=[Depends(require("reader"))],
    responses=AUTH_RESPONSES,
)
CITING_LIMIT = 50  # the reports a card lists, newest first
PaperId = Annotated[
    str, TEXT_QUERY, Path(min_length=1, max_length=300, json_schema_extra=STORABLE)
]  # `corpus:4983`, `pmid:22351513`, `doi:10.1/x`: a source-prefixed id as the reports keep it


class Link(BaseModel):
    label: str
    href: str


class Citing(BaseModel):
    """A report whose current version cites the paper: its number there and the quotes taken from it."""

    report_id: uuid.UUID
    kind: str
    subject: str
    status: str
    reference_id: int
    quotes: list[str] = []
    updated_at: datetime


class PaperView(BaseModel):
    paper_id: str
    in_corpus: bool
    title: str
    authors: list[str] = []
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    abstract: str = ""
    study: str = ""  # the design and size its abstract states: "randomised trial, 19,114 adults"
    links: list[Link] = []
    quotes: list[str] = []
    cited_by: list[Citing] = []


def _web(url: str | None) -> str | None:
    """`url` when a browser may open it (http or https), else None (`corpus:…`, `javascript:`)."""
    text = (url or "").strip()
    return text if text.lower().startswith(("http://", "https://")) and " " not in text else None


def links_of(paper_id: str, doi: str | None, url: str | None) -> list[Link]:
    """Where the paper can be read outside: its DOI, PubMed record, arXiv page and own URL."""
    found: list[Link] = []
    bare_doi = (doi or "").strip().removeprefix("https://doi.org/") or (
        paper_id.removeprefix("doi:") if paper_id.startswith("doi:") else ""
    )
    if bare_doi:
        found.append(Link(label="DOI", href=f"https://doi.org/{bare_doi}"))
    if paper_id.startswith("pmid:"):
        found.append(Link(label="PubMed", href=f"https://pubmed.ncbi.nlm.nih.gov/{paper_id[5:]}/"))
    if paper_id.startswith("arxiv:"):
        found.append(Link(label="arXiv", href=f"https://arxiv.org/abs/{paper_id[6:]}"))
    web = _web(url)
    if web and all(link.href != web for link in found):
        found.append(Link(label="Source page", href=web))
    return found


def _references(content: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A version's references and findings (a source-list snapshot holds its report under `report`)."""
    held = content.get("report")
    report: dict[str, Any] = held if isinstance(held, dict) else content
    references = [r for r in report.get("references") or [] if isinstance(r, dict)]
    findings = [
        f
        for section in report.get("sections") or []
        if isinstance(section, dict)
        for f in section.get("findings") or []
        if isinstance(f, dict)
    ]
    return references, findings


async def _corpus_papers(uow: UnitOfWork, external_ids: list[str]) -> list[CorpusPaper]:
    """The corpus papers stored under `external_ids`. The corpus's own table, not the ledger's
    (so no named query of the ledger): read in the unit of work's snapshot."""
    if not external_ids:
        return []
    found = await uow.session.scalars(
        select(CorpusPaper).where(CorpusPaper.external_id.in_(external_ids))
    )
    return list(found)


async def studies_of(uow: UnitOfWork, content: dict[str, Any]) -> dict[str, str]:
    """Each reference's study design and size as its abstract states them, by reference id: a
    corpus paper's abstract from the corpus, an outside paper's the text the author read."""
    references, _ = _references(content)
    ids = [str(r.get("paper_id") or "") for r in references]
    in_corpus = [corpus_id(i) for i in ids if i.startswith(CORPUS_PREFIX)]
    abstracts = {
        f"{CORPUS_PREFIX}{paper.external_id}": paper.abstract or ""
        for paper in await _corpus_papers(uow, in_corpus)
    }
    found = {}
    for reference, paper_id in zip(references, ids, strict=True):
        study = study_of(abstracts.get(paper_id) or str(reference.get("source_text") or ""))
        if study and reference.get("id") is not None:
            found[str(reference["id"])] = study
    return found


async def citing(uow: UnitOfWork, paper_id: str) -> list[tuple[Any, dict[str, Any], list[str]]]:
    """The reports whose current version cites `paper_id`, newest first: each with the reference
    it cites the paper as and the quotes its findings take from it."""
    found = []
    for report, content in await uow.reports.citing_paper(paper_id, limit=CITING_LIMIT):
        references, findings = _references(content)
        reference = next((r for r in references if r.get("paper_id") == paper_id), None)
        if reference is None:
            continue
        quotes = [
            str(q["text"])
            for f in findings
            for q in f.get("quotes") or []
            if isinstance(q, dict)
            and q.get("reference_id") == reference.get("id")
            and q.get("text")
        ]
        found.append((report, reference, list(dict.fromkeys(quotes))))
    return found


@router.get(
    "/papers/{paper_id:path}",
    response_model=PaperView,
    responses={404: {"description": "the corpus does not hold the paper and no report cites it"}},
)
async def get_paper(paper_id: PaperId, uow: Reading) -> PaperView:
    """A paper's metadata (from the corpus, or as its outside source gave it), its links out,
    the reports citing it and the sentences they quote from it."""
    reports = await citing(uow, paper_id)
    row = None
    if paper_id.startswith(CORPUS_PREFIX):
        row = next(iter(await _corpus_papers(uow, [corpus_id(paper_id)])), None)
    if row is None and not reports:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no paper {paper_id}")
    given = reports[0][1] if reports else {}
    quotes = list(dict.fromkeys(q for _, _, found in reports for q in found))
    view = PaperView(
        paper_id=paper_id,
        in_corpus=row is not None,
        title=(row.title if row is not None else "") or str(given.get("title") or paper_id),
        authors=[
            str(a)
            for a in ((row.authors if row is not None else None) or given.get("authors") or [])
        ],
        year=(row.year if row is not None else None) or given.get("year"),
        venue=(row.venue if row is not None else None) or given.get("venue"),
        doi=(row.doi if row is not None else None) or given.get("doi"),
        abstract=(row.abstract if row is not None else "") or str(given.get("source_text") or ""),
        quotes=quotes,
        cited_by=[
            Citing(
                report_id=report.id,
                kind=report.kind,
                subject=report.subject,
                status=report.status,
                reference_id=int(reference.get("id") or 0),
                quotes=found,
                updated_at=report.updated_at,
            )
            for report, reference, found in reports
        ],
    )
    view.study = study_of(view.abstract)
    view.links = links_of(paper_id, view.doi, given.get("url"))
    return view
