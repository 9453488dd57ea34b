"""Evidence searches as the verifier sees them: corpus `search_papers` over NATS request/reply
(`research.connector.corpus.search_papers`, served by the connector) and the outside connectors
(`research.connector.search`), each call recorded in the run's trace as a tool_call/tool_result pair.

`EvidencePort` is the seam: `research_modes.ConnectorClient` is the service's (a corpus search that
did not answer raises the transient `ToolsUnavailable`; outside sources fail soft); anything with
the same `call` / `outside` (a benchmark running the connector in process) works too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_contracts.corpus_tools import PaperPassage, SearchPapers
from research_modes import ConnectorPort, ToolsUnavailable
from research_runs import RunRecorder

__all__ = ["EvidencePort", "Passage", "Searcher", "ToolsUnavailable"]

ABSTRACT_CHARS = 4000  # longer texts are full texts: the search's best chunk is judged instead


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


EvidencePort = ConnectorPort  # `research_modes.ConnectorClient` in the service, `WatchedPort` around it per run


class Searcher:
    """Recorded searches of one run: corpus always, outside connectors when the request named them."""

    def __init__(
        self,
        port: EvidencePort,
        recorder: RunRecorder,
        *,
        k: int,
        filters: dict[str, Any],
        outside: list[str],
    ) -> None:
        self.port, self.recorder, self.k, self.filters, self.outside_sources = (
            port,
            recorder,
            k,
            filters,
            outside,
        )
        self.calls = 0

    async def search(self, query: str) -> list[Passage]:
        self.calls += 1
        request = SearchPapers(query=query[:1000], k=self.k, **self.filters)
        async with self.recorder.tool(
            "research.search_papers", request.model_dump(exclude_defaults=True)
        ) as call:
            found = [
                PaperPassage.model_validate(p)
                for p in await self.port.call("search_papers", request)
            ]
            call.result = [
                {"paper_id": p.paper_id, "title": p.title[:160], "score": round(p.score, 4)}
                for p in found
            ]
        # The whole abstract when the corpus has one (its evidence sentence may lie outside the best
        # chunk); a full text is too long to judge whole, so its best chunk stands for it.
        passages = [
            Passage(
                p.paper_id,
                p.title or p.paper_id,
                p.text if p.text and len(p.text) <= ABSTRACT_CHARS else p.passage,
                p.year,
                p.venue,
                p.doi,
                None,
                tuple(p.authors),
            )
            for p in found
            if p.text or p.passage
        ]
        if self.outside_sources:
            async with self.recorder.tool(
                "research.connector_search", {"query": query[:300], "sources": self.outside_sources}
            ) as call:
                result = await self.port.outside(query, self.outside_sources, self.k)
                call.result = {
                    "hits": [h.source_id for h in result.hits],
                    "degraded": result.degraded,
                }
            passages += [
                Passage(
                    h.source_id,
                    h.title or h.source_id,
                    h.abstract,
                    h.year,
                    h.venue,
                    h.doi,
                    h.url,
                    tuple(h.authors),
                    bool(h.metadata.get("retracted")),
                )
                for h in result.hits
                if h.abstract
            ]
        return passages
