"""The corpus tools as the agents see them: typed calls, each one recorded in the run's trace.

`ToolPort` is how a tool request reaches the corpus: `BusTools` asks the connector over NATS
request/reply (the service), anything else with the same `call` (the review benchmark runs the
connector's own `CorpusTools` in process) works too. `Toolbox` binds a port to one agent's
`RunRecorder` view: every call is a `tool_call` … `tool_result` pair named like seed 000's tools
(`research.search_papers`, …), with a compact result (ids, titles, scores) so the trace stays small.
Outside sources named by the request are asked through `research.connector.search`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from nats.aio.client import Client as NatsClient
from pydantic import BaseModel

from research_contracts import EvidenceFound, SearchEvidence, SourceHit, TaskFilters, subjects
from research_contracts.corpus_tools import (
    CorpusOverviewRequest,
    CorpusToolReply,
    GetPaper,
    Overview,
    PaperPassage,
    PaperRecord,
    PublicationTrends,
    SearchMetadata,
    SearchPapers,
    TopCited,
    TrendPoint,
)
from research_runs import RunRecorder


class ToolFailed(RuntimeError):
    """A corpus tool refused the request or could not answer (transient for the caller)."""


class ToolPort(Protocol):
    async def call(self, tool: str, request: BaseModel) -> Any:
        """The tool's `result` JSON; raises `ToolFailed`."""

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        """Evidence from outside connectors (`research.connector.search`)."""


class BusTools:
    """The connector's corpus tools over NATS request/reply."""

    def __init__(self, connection: Callable[[], NatsClient], *, timeout_s: float) -> None:
        self._connection = connection  # looked up per call: the broker connects after the lifespan starts
        self.timeout_s = timeout_s

    @property
    def nc(self) -> NatsClient:
        return self._connection()

    async def call(self, tool: str, request: BaseModel) -> Any:
        try:
            msg = await self.nc.request(subjects.corpus_tool_subject(tool), request.model_dump_json().encode(), timeout=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - no responder / timeout: the review is retried later
            raise ToolFailed(f"{tool}: {type(exc).__name__}: {exc}") from exc
        reply = CorpusToolReply.model_validate_json(msg.data)
        if reply.error:
            raise ToolFailed(f"{tool}: {reply.error}")
        return reply.result

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        request = SearchEvidence(query=query[:1000], sources=sources, limit=limit, filters=TaskFilters())
        try:
            msg = await self.nc.request(subjects.CONNECTOR_SEARCH, request.model_dump_json().encode(), timeout=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - outside sources are fail-soft
            return EvidenceFound(degraded={s: f"{type(exc).__name__}" for s in sources})
        return EvidenceFound.model_validate_json(msg.data)


def _compact(items: list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        row = {"paper_id": item.paper_id, "title": item.title[:160], "year": item.year}
        if isinstance(item, PaperPassage):
            row["score"] = round(item.score, 4)
        out.append(row)
    return out


class Toolbox:
    """Typed, recorded corpus tools for one agent of one run."""

    def __init__(self, port: ToolPort, recorder: RunRecorder) -> None:
        self.port = port
        self.recorder = recorder
        self.calls = 0

    async def _run(self, tool_id: str, tool: str, request: BaseModel, parse: Any, compact: Any = None) -> Any:
        self.calls += 1
        params = request.model_dump(exclude_defaults=True)
        async with self.recorder.tool(tool_id, params) as call:
            result = parse(await self.port.call(tool, request))
            call.result = compact(result) if compact else result
        return result

    async def search_papers(self, query: str, *, k: int = 8, **filters: Any) -> list[PaperPassage]:
        request = SearchPapers(query=query[:1000], k=k, **filters)
        return await self._run("research.search_papers", "search_papers", request,
                               lambda r: [PaperPassage.model_validate(p) for p in r], _compact)

    async def search_metadata(self, **query: Any) -> list[PaperRecord]:
        return await self._run("research.search_metadata", "search_metadata", SearchMetadata(**query),
                               lambda r: [PaperRecord.model_validate(p) for p in r], _compact)

    async def publication_trends(self, topic: str, **years: Any) -> list[TrendPoint]:
        return await self._run("research.publication_trends", "publication_trends", PublicationTrends(topic=topic[:500], **years),
                               lambda r: [TrendPoint.model_validate(p) for p in r],
                               lambda points: [p.model_dump() for p in points if p.papers])

    async def top_cited(self, topic: str | None, k: int = 10) -> list[PaperRecord]:
        return await self._run("research.top_cited", "top_cited", TopCited(topic=topic[:500] if topic else None, k=k),
                               lambda r: [PaperRecord.model_validate(p) for p in r], _compact)

    async def corpus_overview(self) -> Overview:
        return await self._run("research.corpus_overview", "corpus_overview", CorpusOverviewRequest(),
                               Overview.model_validate, lambda o: o.model_dump(mode="json"))

    async def get_papers(self, paper_ids: list[str], *, with_text: bool = True) -> list[PaperRecord]:
        """One batch lookup of every id (the peer reviewer's reference check)."""
        if not paper_ids:
            return []
        return await self._run("research.get_paper", "get_paper", GetPaper(paper_ids=paper_ids[:200], with_text=with_text),
                               lambda r: [PaperRecord.model_validate(p) for p in r], _compact)

    async def outside(self, query: str, sources: list[str], limit: int) -> list[SourceHit]:
        """Hits of the outside connectors the request named (fail-soft: degraded sources give none)."""
        self.calls += 1
        async with self.recorder.tool("research.connector_search", {"query": query[:300], "sources": sources}) as call:
            found = await self.port.outside(query, sources, limit)
            call.result = {"hits": [{"source_id": h.source_id, "title": h.title[:160]} for h in found.hits],
                           "degraded": found.degraded}
        return found.hits
