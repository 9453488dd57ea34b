"""The `corpus` source: hybrid search over the local corpus in PostgreSQL (no network)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import SourceHit, TaskFilters
from research_corpus.search import SearchFilters, SearchMode, search
from research_platform.settings import CorpusSettings


class CorpusSource:
    """Evidence from the ingested corpus; ids are `corpus:<id in the ingested file>`."""

    name = "corpus"

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], settings: CorpusSettings
    ) -> None:
        self._sessions = sessions
        self._settings = settings

    async def search(
        self,
        query: str,
        filters: TaskFilters | None = None,
        limit: int = 10,
        mode: SearchMode = "hybrid",
    ) -> list[SourceHit]:
        wanted = SearchFilters(
            year_from=filters.year_from if filters else None,
            year_to=filters.year_to if filters else None,
        )
        async with self._sessions() as session:
            papers = await search(
                session, query, k=limit, mode=mode, filters=wanted, settings=self._settings
            )
        return [
            SourceHit(
                source_id=f"corpus:{paper.external_id}",
                source=self.name,
                title=paper.title,
                authors=list(paper.authors or []),
                venue=paper.venue,
                year=paper.year,
                abstract=paper.abstract,
                score=paper.score,
                locator=paper.locator,
                doi=paper.doi,
                metadata={"passage": paper.passage},
            )
            for paper in papers
        ]
