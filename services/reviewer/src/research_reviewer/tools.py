"""The corpus tools as the agents see them: typed calls, each one recorded in the run's trace.

`ToolPort` is how a tool request reaches the corpus: `research_modes.ConnectorClient` asks the
connector over NATS request/reply (the service; a tool that cannot answer raises the transient
`ToolsUnavailable`), anything else with the same `call` / `outside` (the review benchmark runs the
connector's own `CorpusTools` in process) works too. `Toolbox` binds a port to one agent's
`RunRecorder` view: every call is a `tool_call` … `tool_result` pair named like seed 000's tools
(`research.search_papers`, …), with a compact result (ids, titles, scores) so the trace stays small.
Outside sources named by the request are asked through `research.connector.search`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from research_contracts import SourceHit
from research_contracts.corpus_tools import (
    CorpusOverviewRequest,
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
from research_modes import ConnectorPort
from research_runs import RunRecorder

ToolPort = ConnectorPort  # `research_modes.ConnectorClient` in the service; `WatchedPort` around it per run


def _compact(items: list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        row = {"paper_id": item.paper_id, "title": item.title[:160], "year": item.year}
        if isinstance(item, PaperPassage):
            row["score"] = round(item.score, 4)
        out.append(row)
    return out


T = TypeVar("T")


class Toolbox:
    """Typed, recorded corpus tools for one agent of one run."""

    def __init__(self, port: ToolPort, recorder: RunRecorder) -> None:
        self.port = port
        self.recorder = recorder
        self.calls = 0

    async def _run(
        self,
        tool_id: str,
        tool: str,
        request: BaseModel,
        parse: Callable[[Any], T],
        compact: Callable[[T], Any] | None = None,
    ) -> T:
        self.calls += 1
        params = request.model_dump(exclude_defaults=True)
        async with self.recorder.tool(tool_id, params) as call:
            result = parse(await self.port.call(tool, request))
            call.result = compact(result) if compact else result
        return result

    async def search_papers(self, query: str, *, k: int = 8, **filters: Any) -> list[PaperPassage]:
        request = SearchPapers(query=query[:1000], k=k, **filters)
        return await self._run(
            "research.search_papers",
            "search_papers",
            request,
            lambda r: [PaperPassage.model_validate(p) for p in r],
            _compact,
        )

    async def search_metadata(self, **query: Any) -> list[PaperRecord]:
        return await self._run(
            "research.search_metadata",
            "search_metadata",
            SearchMetadata(**query),
            lambda r: [PaperRecord.model_validate(p) for p in r],
            _compact,
        )

    async def publication_trends(self, topic: str, **years: Any) -> list[TrendPoint]:
        return await self._run(
            "research.publication_trends",
            "publication_trends",
            PublicationTrends(topic=topic[:500], **years),
            lambda r: [TrendPoint.model_validate(p) for p in r],
            lambda points: [p.model_dump() for p in points if p.papers],
        )

    async def top_cited(self, topic: str | None, k: int = 10) -> list[PaperRecord]:
        return await self._run(
            "research.top_cited",
            "top_cited",
            TopCited(topic=topic[:500] if topic else None, k=k),
            lambda r: [PaperRecord.model_validate(p) for p in r],
            _compact,
        )

    async def corpus_overview(self) -> Overview:
        return await self._run(
            "research.corpus_overview",
            "corpus_overview",
            CorpusOverviewRequest(),
            Overview.model_validate,
            lambda o: o.model_dump(mode="json"),
        )

    async def get_papers(
        self, paper_ids: list[str], *, with_text: bool = True
    ) -> list[PaperRecord]:
        """One batch lookup of every id (the peer reviewer's reference check)."""
        if not paper_ids:
            return []
        return await self._run(
            "research.get_paper",
            "get_paper",
            GetPaper(paper_ids=paper_ids[:200], with_text=with_text),
            lambda r: [PaperRecord.model_validate(p) for p in r],
            _compact,
        )

    async def outside(self, query: str, sources: list[str], limit: int) -> list[SourceHit]:
        """Hits of the outside connectors the request named (fail-soft: degraded sources give none)."""
        self.calls += 1
        async with self.recorder.tool(
            "research.connector_search", {"query": query[:300], "sources": sources}
        ) as call:
            found = await self.port.outside(query, sources, limit)
            call.result = {
                "hits": [{"source_id": h.source_id, "title": h.title[:160]} for h in found.hits],
                "degraded": found.degraded,
            }
        return found.hits
