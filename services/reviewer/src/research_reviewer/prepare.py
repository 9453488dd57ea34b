"""Turn a validated `RequestReview` into the job the agents work on; fail fast otherwise.

FastStream has parsed and validated the command (empty / oversized topic, unknown source, more
than two rounds never get here). What is left: the topic is sanitised (control characters and
injection phrasing go — it reaches prompts and the stored report), the ledger entity of the
review's claims is derived from it, the outside sources are separated from the corpus, and the
request is stored de-identified. A topic with no content word left is a `PrepareError`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from research_contracts.reviews import RequestReview, ReviewFilters, topic_key
from research_platform.errors import PrepareError
from research_privacy.deidentify import deidentify
from research_privacy.sanitise import sanitise
from research_reviewer.evidence import topic_terms


@dataclass(frozen=True)
class ReviewJob:
    review_id: uuid.UUID
    run_id: str
    topic: str
    topic_key: str
    filters: ReviewFilters
    sources: list[str]
    max_iterations: int
    refresh: bool
    origin: str
    outside_sources: list[str] = field(default_factory=list)

    def stored_request(self) -> dict[str, Any]:
        """The request as the ledger keeps it: identifiers in the topic replaced by placeholders."""
        return {
            "topic": deidentify(self.topic).text,
            "filters": self.filters.model_dump(exclude_none=True),
            "sources": self.sources,
            "max_iterations": self.max_iterations,
            "origin": self.origin,
        }


def review_job(command: RequestReview) -> ReviewJob:
    """The normalised job of `command`; `PrepareError` when the topic holds nothing to review."""
    topic = " ".join(sanitise(command.topic).split())
    if not topic_terms(topic):
        raise PrepareError("the topic has no content word to search for")
    return ReviewJob(
        review_id=command.review_id,
        run_id=command.effective_run_id(),
        topic=topic,
        topic_key=topic_key(topic),
        filters=command.filters,
        sources=list(command.sources),
        max_iterations=command.max_iterations,
        refresh=command.refresh,
        origin=command.origin,
        outside_sources=[s for s in command.sources if s != "corpus"],
    )
