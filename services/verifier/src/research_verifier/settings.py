"""The verifier's settings group (`VERIFIER__…`) on top of the settings every process shares."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat

from research_platform.settings import CorpusAgentSettings, Settings


class VerifierSettings(CorpusAgentSettings):
    """How hard the verifier searches and how often watched claims are re-verified."""

    passages_per_query: int = Field(default=6, ge=1, le=50)
    """Papers taken from each search."""
    judged_papers: int = Field(default=12, ge=1, le=50)
    """Most on-topic papers per statement whose sentences the offline engine judges
    (relevance-reranked; off-topic papers are never judged)."""
    evidence_model: Literal["abstract", "sentence"] = "abstract"
    """How the offline engine finds evidence: `abstract` — the abstract-level model reads each paper
    whole (when it ships); `sentence` — relevance cut, then sentence-by-sentence stance."""
    queries_per_statement: int = Field(default=4, ge=3, le=8)
    """Differently worded searches per statement (≥ 3)."""
    qualifier_searches: int = Field(default=2, ge=0, le=4)
    """Targeted searches per qualifying passage's statement."""
    quotes_per_side: int = Field(default=6, ge=1, le=20)
    """Passages quoted per report section."""
    llm_role: Literal["check", "label"] = "check"
    """What a configured LLM does: `check` — the offline judge decides and the LLM is asked whether
    the quoted sentences support or contradict the claim, a veto only (a disagreement makes the
    verdict INSUFFICIENT EVIDENCE); `label` — the LLM labels the passages itself."""
    watch_days: PositiveFloat = 30.0
    """A watched claim is re-verified this many days after its last run."""


class VerifierServiceSettings(Settings):
    """The verifier process's settings root."""

    verifier: VerifierSettings = Field(default_factory=VerifierSettings)
