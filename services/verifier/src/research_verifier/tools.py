"""Evidence searches as the verifier sees them: corpus `search_papers` over NATS request/reply
(`research.connector.corpus.search_papers`, served by the connector) and the outside connectors
(`research.connector.search`), each call recorded in the run's trace as a tool_call/tool_result pair.

`EvidencePort` is the seam: `BusEvidence` is the service's; anything with the same two methods
(a benchmark running the connector in process) works too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from nats.aio.client import Client as NatsClient

from research_contracts import EvidenceFound, SearchEvidence, TaskFilters, subjects
from research_contracts.corpus_tools import CorpusToolReply, PaperPassage, SearchPapers
from research_platform.errors import TransientError
from research_runs import RunRecorder


class ToolsUnavailable(TransientError):
    """The connector did not answer a corpus search: the verification is retried later."""


@dataclass(frozen=True)
class Passage:
    """One retrieved passage, whatever source it came from."""

    paper_id: str
    title: str
    text: str
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    url: str | None = None
    authors: tuple[str, ...] = ()
    retracted: bool = False


class EvidencePort(Protocol):
    async def search_papers(self, request: SearchPapers) -> list[PaperPassage]: ...

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound: ...


class BusEvidence:
    """The connector's tools over NATS (the connection is looked up per call: the broker connects late)."""

    def __init__(self, connection: Callable[[], NatsClient], *, timeout_s: float) -> None:
        self._connection = connection
        self.timeout_s = timeout_s

    async def search_papers(self, request: SearchPapers) -> list[PaperPassage]:
        try:
            msg = await self._connection().request(subjects.corpus_tool_subject("search_papers"),
                                                   request.model_dump_json().encode(), timeout=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - no responder / timeout: retried later
            raise ToolsUnavailable(f"search_papers: {type(exc).__name__}: {exc}") from exc
        reply = CorpusToolReply.model_validate_json(msg.data)
        if reply.error:
            raise ToolsUnavailable(f"search_papers: {reply.error}")
        return [PaperPassage.model_validate(p) for p in reply.result]

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        request = SearchEvidence(query=query[:1000], sources=sources, limit=limit, filters=TaskFilters())
        try:
            msg = await self._connection().request(subjects.CONNECTOR_SEARCH, request.model_dump_json().encode(), timeout=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - outside sources are fail-soft
            return EvidenceFound(degraded={s: type(exc).__name__ for s in sources})
        return EvidenceFound.model_validate_json(msg.data)


class Searcher:
    """Recorded searches of one run: corpus always, outside connectors when the request named them."""

    def __init__(self, port: EvidencePort, recorder: RunRecorder, *, k: int, filters: dict[str, Any], outside: list[str]) -> None:
        self.port, self.recorder, self.k, self.filters, self.outside_sources = port, recorder, k, filters, outside
        self.calls = 0

    async def search(self, query: str) -> list[Passage]:
        self.calls += 1
        request = SearchPapers(query=query[:1000], k=self.k, **self.filters)
        async with self.recorder.tool("research.search_papers", request.model_dump(exclude_defaults=True)) as call:
            found = await self.port.search_papers(request)
            call.result = [{"paper_id": p.paper_id, "title": p.title[:160], "score": round(p.score, 4)} for p in found]
        passages = [Passage(p.paper_id, p.title or p.paper_id, p.passage, p.year, p.venue, p.doi, None, tuple(p.authors))
                    for p in found if p.passage]
        if self.outside_sources:
            async with self.recorder.tool("research.connector_search", {"query": query[:300], "sources": self.outside_sources}) as call:
                result = await self.port.outside(query, self.outside_sources, self.k)
                call.result = {"hits": [h.source_id for h in result.hits], "degraded": result.degraded}
            passages += [Passage(h.source_id, h.title or h.source_id, h.abstract, h.year, h.venue, h.doi, h.url, tuple(h.authors),
                                 bool(h.metadata.get("retracted")))
                         for h in result.hits if h.abstract]
        return passages
