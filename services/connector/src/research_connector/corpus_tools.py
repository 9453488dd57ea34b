"""The corpus tools (request/reply on `research.connector.corpus.<tool>`): the connector owns the
local corpus, so every mode asks it — the review author and peer reviewer, the claim verifier.

Each tool takes its parsed request (a bad one is answered with `error`, never raised), runs the
`research_corpus` search or analytics query in its own read-only session and answers a
`CorpusToolReply`. `get_paper` looks up any number of ids in one query: the peer reviewer's
reference check is one batch, as the seed asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from faststream.nats import NatsBroker
from pydantic import BaseModel, ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import subjects
from research_contracts.corpus_tools import (
    CORPUS_PREFIX,
    CORPUS_TOOLS,
    TOOL_REQUESTS,
    CorpusOverviewRequest,
    CorpusToolReply,
    GetPaper,
    PaperPassage,
    PaperRecord,
    PublicationTrends,
    SearchMetadata,
    SearchPapers,
    TopCited,
    corpus_id,
)
from research_corpus import analytics
from research_corpus.search import PaperHit, SearchFilters, search
from research_platform.logging import get_logger
from research_platform.replies import empty_is_object, refusing
from research_platform.settings import CorpusSettings

log = get_logger(__name__)
Sessions = Callable[[], async_sessionmaker[AsyncSession]]


def _described(paper: Any, text: str = "") -> dict[str, Any]:
    """What every tool's answer says of a corpus paper (a summary, a search hit or a row): its
    prefixed id, its bibliographic fields and the `text` it shows (none, the abstract, a passage)."""
    return {
        "paper_id": CORPUS_PREFIX + paper.external_id,
        "title": paper.title,
        "authors": list(paper.authors or []),
        "year": paper.year,
        "venue": paper.venue,
        "doi": paper.doi,
        "citation_count": paper.citation_count,
        "text": text,
    }


def _passage(hit: PaperHit) -> PaperPassage:
    """A search hit as `search_papers` answers it: the paper, its abstract and the passage found."""
    described = _described(hit, hit.abstract)
    return PaperPassage(
        **described, score=hit.score, passage=hit.passage, locator=hit.locator, section=hit.section
    )


def _record(summary: analytics.PaperSummary) -> PaperRecord:
    return PaperRecord(**_described(summary))


class CorpusTools:
    """The six tools over one session factory (looked up per call: it is built in the lifespan)."""

    def __init__(self, sessions: Sessions, settings: CorpusSettings) -> None:
        self._sessions = sessions
        self._settings = settings

    async def search_papers(self, request: SearchPapers) -> list[PaperPassage]:
        filters = SearchFilters(
            year_from=request.year_from,
            year_to=request.year_to,
            venue=request.venue,
            section=request.section,
        )
        async with self._sessions()() as session:
            hits = await search(
                session,
                request.query,
                k=request.k,
                mode=request.mode,
                filters=filters,
                settings=self._settings,
            )
        return [_passage(h) for h in hits]

    async def search_metadata(self, request: SearchMetadata) -> list[PaperRecord]:
        if request.topic:
            found = await self.search_papers(
                SearchPapers(
                    query=request.topic,
                    k=min(50, request.limit * 3),
                    year_from=request.year_from,
                    year_to=request.year_to,
                    venue=request.venue,
                )
            )
            keep = [
                p
                for p in found
                if (
                    request.author is None
                    or any(request.author.lower() in a.lower() for a in p.authors)
                )
                and (request.year is None or p.year == request.year)
                and (request.title is None or request.title.lower() in p.title.lower())
            ]
            return [
                PaperRecord(
                    **p.model_dump(exclude={"score", "passage", "locator", "section", "text"})
                )
                for p in keep[: request.limit]
            ]
        async with self._sessions()() as session:
            rows = await analytics.find_papers(
                session,
                title=request.title,
                author=request.author,
                venue=request.venue,
                year=request.year,
                year_from=request.year_from,
                year_to=request.year_to,
                limit=request.limit,
            )
        return [_record(r) for r in rows]

    async def publication_trends(self, request: PublicationTrends) -> list[dict[str, Any]]:
        async with self._sessions()() as session:
            points = await analytics.publication_trends(
                session, request.topic, request.year_from, request.year_to
            )
        return [p.model_dump() for p in points]

    async def top_cited(self, request: TopCited) -> list[PaperRecord]:
        async with self._sessions()() as session:
            rows = await analytics.top_cited(session, request.topic, request.k)
        return [_record(r) for r in rows]

    async def corpus_overview(self, request: CorpusOverviewRequest) -> dict[str, Any]:
        async with self._sessions()() as session:
            return (await analytics.corpus_overview(session, request.top_venues)).model_dump()

    async def get_paper(self, request: GetPaper) -> list[PaperRecord]:
        """Every known paper of `paper_ids`, in one query (unknown ids are simply absent)."""
        ids = list(dict.fromkeys(corpus_id(p) for p in request.paper_ids))
        async with self._sessions()() as session:
            rows = await session.execute(
                text(
                    """SELECT external_id, title, authors, year, venue, doi, citation_count,
                              CASE WHEN :with_text THEN abstract ELSE '' END AS text
                       FROM corpus_papers WHERE external_id = ANY(:ids)"""
                ),
                {"ids": ids, "with_text": request.with_text},
            )
            return [PaperRecord(**_described(r, r.text or "")) for r in rows]

    async def answer(self, tool: str, request: BaseModel) -> CorpusToolReply:
        """Run one (validated) tool request; a fault comes back as `error`."""
        try:
            result = await getattr(self, tool)(request)
        except Exception as exc:  # noqa: BLE001 - a tool fault is the caller's to see, never a crashed subscriber
            log.warning("corpus tool failed", tool=tool, error=repr(exc))
            return CorpusToolReply(tool=tool, error=f"{type(exc).__name__}: {exc}"[:500])
        return CorpusToolReply(tool=tool, result=_plain(result))


def _plain(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, list):
        return [_plain(r) for r in result]
    return result


def _refused(tool: str, exc: ValidationError) -> CorpusToolReply:
    """The answer to a `tool` request that does not validate."""
    return CorpusToolReply(
        tool=tool, error=f"invalid {tool} request: {exc.errors(include_url=False)}"
    )


def subscribe(broker: NatsBroker, tools: CorpusTools) -> None:
    """One request/reply subscriber per tool, in the connector's queue group, taking the tool's
    parsed request (an empty body is `{}`); a request that does not validate is answered with `error`."""

    def handler(tool: str) -> Callable[..., Awaitable[CorpusToolReply]]:
        async def on_tool(request: BaseModel) -> CorpusToolReply:
            return await tools.answer(tool, request)

        on_tool.__annotations__ = {
            "request": TOOL_REQUESTS[tool],
            "return": CorpusToolReply,
        }  # FastStream parses by it
        on_tool.__doc__ = (
            f"Corpus tool `{tool}`: request {TOOL_REQUESTS[tool].__name__}, reply CorpusToolReply."
        )
        return on_tool

    for tool in CORPUS_TOOLS:
        router = refusing(partial(_refused, tool))
        router.subscriber(
            subjects.corpus_tool_subject(tool),
            queue=subjects.CONNECTOR_QUEUE,
            title=f"connector.corpus.{tool}",
            decoder=empty_is_object,
        )(handler(tool))
        broker.include_router(router)
