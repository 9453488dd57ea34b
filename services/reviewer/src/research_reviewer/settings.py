"""The reviewer's settings group (`REVIEWER__…`) on top of the settings every process shares."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt

from research_platform.settings import CorpusAgentSettings, Settings, Share
from research_reviewer.judged import TopicCut
from research_verification.evidence import FLOOR, STRONG_FINDING


class ReviewerSettings(CorpusAgentSettings):
    """How hard the author searches, how the loop and the stale sweep run."""

    judge: Literal["abstract", "abstract_only", "chain"] = "abstract"
    """Which papers are on the topic and which sentences are their findings: abstract = the
    abstract-level evidence model reads the `papers_read` papers the relevance model ranks first,
    whole (the verifier's model), and a paper the relevance model puts over `relevance_floor` counts
    too (its findings by the sentence-level rule); abstract_only = the abstract model alone; chain =
    the relevance cut, admit floor and sentence-level evidence rule of before (docs/benchmarks.md,
    bench:review, has the figures)."""
    passages_per_query: int = Field(default=8, ge=1, le=50)
    """Papers taken from each evidence search."""
    findings_per_question: int = Field(default=2, ge=1, le=5)
    """Key findings kept per subtopic."""
    relevance_floor: Share = 0.5
    """Calibrated P(on topic) (the relevance model) a paper needs before its findings are used; the
    peer reviewer calls a finding whose paper scores below it off topic, unless the paper is
    admitted (`admit_floor`, `strong_finding`)."""
    admit_floor: Share = FLOOR
    """Calibrated P(on topic) under `relevance_floor` at which a paper still counts when one of its
    sentences squarely states a finding on the topic (`strong_finding`); the verifier's rule."""
    strong_finding: Share = STRONG_FINDING
    """The abstract rule's strength (the stance model) that admits a paper between `admit_floor`
    and `relevance_floor`."""
    papers_read: int = Field(default=12, ge=1, le=50)
    """On-topic papers (best first) whose sentences the evidence model reads."""
    counter_papers: int = Field(default=4, ge=0, le=20)
    """Papers taken from each finding's counter-evidence search."""
    subtopic_similarity: float = Field(default=0.5, ge=-1.0, le=1.0)
    """Mean cosine (MiniLM) at which two groups of evidence sentences are one subtopic."""
    max_subtopics: int = Field(default=4, ge=1, le=8)
    """Most subtopics (sub-questions) a review is organised by."""
    spot_checks: int = Field(default=4, ge=3, le=5)
    """Findings the peer reviewer re-finds by independent search."""
    claim_days: PositiveInt = 365
    """A review's claims decay after this many days."""
    sweep_interval_s: PositiveFloat = 60.0
    """How often the stale sweep looks at findings."""

    @property
    def cut(self) -> TopicCut:
        """When a paper is on the topic, for the author and the peer reviewer alike."""
        return TopicCut(
            on_topic=self.relevance_floor,
            floor=self.admit_floor,
            strong_finding=self.strong_finding,
            mode=self.judge,
        )


class ReviewerServiceSettings(Settings):
    """The reviewer process's settings root."""

    reviewer: ReviewerSettings = Field(default_factory=ReviewerSettings)
