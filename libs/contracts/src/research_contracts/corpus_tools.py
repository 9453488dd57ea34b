"""Corpus tools: request/reply questions to the connector, which owns the local corpus.

One subject per tool, `research.connector.corpus.<tool>` (queue group `connector`):

    search_papers       passages, hybrid (BM25 + kNN), with filters  → list[PaperPassage]
    search_metadata     papers by topic / title / author / venue / year → list[PaperRecord]
    publication_trends  papers about a topic per year               → list[TrendPoint]
    top_cited           most cited papers (about a topic)           → list[PaperRecord]
    corpus_overview     size and shape of the corpus                → Overview
    get_paper           papers by id, in ONE batch query            → list[PaperRecord]

Every reply is a `CorpusToolReply` (`result` is the JSON of the type above, `error` the reason
a request was refused). Paper ids are source-prefixed: `corpus:<id in the ingested file>`.
The literature-review author and peer reviewer call these (seed 000's `research.*` tools), and
so will the claim verifier.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

CORPUS_TOOLS: Final = (
    "search_papers",
    "search_metadata",
    "publication_trends",
    "top_cited",
    "corpus_overview",
    "get_paper",
)
CORPUS_PREFIX: Final = "corpus:"


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchPapers(_Request):
    query: str = Field(min_length=1, max_length=1000, examples=["vitamin D fracture risk"])
    k: int = Field(default=8, ge=1, le=50)
    mode: Literal["hybrid", "lexical", "dense"] = "hybrid"
    year_from: int | None = None
    year_to: int | None = None
    venue: str | None = None
    section: str | None = None


class SearchMetadata(_Request):
    topic: str | None = Field(
        default=None,
        max_length=1000,
        description="Ranked by the corpus search over titles and text.",
    )
    title: str | None = Field(default=None, max_length=500)
    author: str | None = Field(default=None, max_length=200)
    venue: str | None = Field(default=None, max_length=300)
    year: int | None = None
    year_from: int | None = None
    year_to: int | None = None
    limit: int = Field(default=10, ge=1, le=100)


class PublicationTrends(_Request):
    topic: str = Field(
        min_length=1,
        max_length=500,
        description='websearch syntax: words, "phrases", or, -excluded.',
    )
    year_from: int | None = None
    year_to: int | None = None


class TopCited(_Request):
    topic: str | None = Field(default=None, max_length=500)
    k: int = Field(default=10, ge=1, le=100)


class CorpusOverviewRequest(_Request):
    top_venues: int = Field(default=10, ge=1, le=100)


class GetPaper(_Request):
    paper_ids: list[str] = Field(
        min_length=1, max_length=200, description="`corpus:<id>` (or the bare id)."
    )
    with_text: bool = Field(default=True, description="Include the abstract / full text.")


TOOL_REQUESTS: Final[dict[str, type[BaseModel]]] = {
    "search_papers": SearchPapers,
    "search_metadata": SearchMetadata,
    "publication_trends": PublicationTrends,
    "top_cited": TopCited,
    "corpus_overview": CorpusOverviewRequest,
    "get_paper": GetPaper,
}


class PaperRecord(BaseModel):
    """A corpus paper's metadata (and text when asked for)."""

    paper_id: str = Field(examples=["corpus:4983"])
    title: str
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    citation_count: int | None = None
    text: str = Field(default="", description="Abstract / full text (get_paper with_text).")


class PaperPassage(PaperRecord):
    """A paper found by `search_papers`, with its best-matching passage."""

    score: float
    passage: str
    locator: str
    section: str = "abstract"


class TrendPoint(BaseModel):
    year: int
    papers: int
    share: float


class Overview(BaseModel):
    papers: int
    chunks: int
    papers_per_year: dict[int, int] = Field(default_factory=dict)
    papers_without_year: int = 0
    mean_citations: float | None = None
    papers_with_citations: int = 0
    top_venues: list[tuple[str, int]] = Field(default_factory=list)


class CorpusToolReply(BaseModel):
    """Reply of every corpus tool: the result, or why the request was refused."""

    tool: str
    result: Any = None
    error: str | None = None


def corpus_id(paper_id: str) -> str:
    """The bare id in the ingested file of `corpus:<id>` (a bare id is returned as is)."""
    return paper_id.removeprefix(CORPUS_PREFIX)
