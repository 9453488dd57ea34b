"""Source lists (seed 002): the request command, the typed `SourceList` output and the update event.

A user or another agent asks for a curated, typed list of references on a topic
(`RequestSourceList` on `research.sourcelist.requested`, or `POST /source-lists` with its
`SourceListRequest` part). The scout
answers with a `SourceList` snapshot — exactly the seed's output structure — and, when the list
is scheduled, re-runs it and publishes `SourceListUpdated` with the diff against the previous
snapshot on `research.sourcelist.updated`.

Kept apart from `messages.py` so the modes land independently; subject names live in
`subjects.py`.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from research_contracts.reviews import FILLED, deidentified_within
from research_contracts.runs import RUN_ID_PATTERN, new_run_id
from research_privacy.boundary import person_text

# ISO 8601 durations such as P1D, PT12H, P1W, P1DT6H (years count 365 days, months 30).
DURATION_PATTERN = r"^P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+(\.[0-9]+)?S)?)?$"
# A re-run period as the schema states it: a positive duration (some digit is not 0), each part at
# most 6 digits (the sum stays within a timedelta), so every value the schema admits is accepted.
# Digits are `[0-9]`, never `\d`: Python's `\d` also takes other scripts' digits, ECMA-262's does not.
UPDATE_FREQUENCY_PATTERN = r"^P(?=.*[1-9])([0-9]{1,6}Y)?([0-9]{1,6}M)?([0-9]{1,6}W)?([0-9]{1,6}D)?(T(?=[0-9])([0-9]{1,6}H)?([0-9]{1,6}M)?([0-9]{1,6}(\.[0-9]{1,6})?S)?)?$"
# One keyword: 1-100 characters, not only whitespace.
KEYWORD_PATTERN = FILLED  # a non-blank character (whitespace spelled out: see reviews.WHITESPACE)
# BCP 47 language tags: a primary subtag and optional subtags (en, en-GB, zh-Hant-TW, pt-BR).
LANGUAGE_PATTERN = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
PROMPT_MAX_CHARS = 2000
HARD_MAX_REFERENCES = 1000  # beyond any workspace's limit: such a request is a mistake, not a wish
_DURATION = TypeAdapter(dt.timedelta)


class SourceType(StrEnum):
    """Drives which APIs a run asks (one source type per run, as the seed decides)."""

    academic = "academic"
    general = "general"
    news = "news"


class DetailLevel(StrEnum):
    """How much is extracted per source, in increasing order of cost."""

    citation_summary = "citation_summary"
    citation_extract = "citation_extract"
    facts_list = "facts_list"

    @property
    def rank(self) -> int:
        return list(DetailLevel).index(self)


class FactConfidence(StrEnum):
    high = "high"
    medium = "medium"
    inferred = "inferred"


def duration_seconds(value: str) -> float:
    """Seconds of an ISO 8601 duration (`P1D` → 86400); ValueError when it is not one."""
    if not re.match(DURATION_PATTERN, value):
        raise ValueError(f"{value!r} is not an ISO 8601 duration such as P1D or PT12H")
    return _DURATION.validate_python(value).total_seconds()


class RecordRef(BaseModel):
    """A reference to any record a list is attached to (task, item, note, organisation, person…)."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(
        pattern=r"^[a-z][a-z_]{0,39}$", examples=["task", "item", "note", "organisation"]
    )
    id: str = Field(min_length=1, max_length=200, examples=["7f3c2a"])

    @field_validator("id")
    @classmethod
    def _deidentified(cls, value: str) -> str:
        return person_text(
            value
        )  # a record id may be a patient's number: the privacy boundary applies


class SourceListRequest(BaseModel):
    """What a caller may ask for (`POST /source-lists`, the MCP `build_source_list` tool): the
    command's fields less the ones the server sets (`run_id`, `trigger`, `origin`), which a caller
    sending them is refused (422) — a run id is made by the server, so nobody names another's run.
    """

    model_config = ConfigDict(
        extra="forbid", regex_engine="python-re"
    )  # the update_frequency pattern looks ahead

    source_list_id: uuid.UUID = Field(
        default_factory=uuid.uuid4, description="Idempotency key of the list."
    )
    workspace: str = Field(
        default="default",
        min_length=1,
        max_length=50,
        pattern=r"^[a-z0-9][a-z0-9_.-]{0,49}$",
        description="Whose admin limits apply (a slug, as in /source-lists/limits/{workspace}).",
    )
    prompt: str = Field(
        min_length=3,
        max_length=PROMPT_MAX_CHARS,
        description="The research question or topic.",
        examples=["Does vitamin D supplementation reduce fracture risk in older adults?"],
    )
    keywords: list[Annotated[str, Field(min_length=1, max_length=100, pattern=KEYWORD_PATTERN)]] = (
        Field(
            default_factory=list,
            max_length=20,
            description="Anchor terms; extracted from the prompt when omitted.",
        )
    )
    source_type: SourceType = Field(default=SourceType.academic)
    num_references: int = Field(
        default=10, ge=1, le=HARD_MAX_REFERENCES, description="Target number of references."
    )
    detail_level: DetailLevel = Field(default=DetailLevel.citation_summary)
    language: str | None = Field(
        default=None, pattern=LANGUAGE_PATTERN, description="BCP 47 tag.", examples=["en"]
    )
    date_from: dt.date | None = Field(
        default=None, description="Only sources published on or after this date."
    )
    date_to: dt.date | None = Field(
        default=None,
        description="Only sources published on or before this date; not "
        "before date_from (a 422: JSON Schema cannot compare two fields).",
    )
    update_frequency: str | None = Field(
        default=None,
        examples=["P1D", "PT12H"],
        pattern=UPDATE_FREQUENCY_PATTERN,
        description="ISO 8601 duration of re-runs (P1D, PT12H); null = one-shot.",
    )
    save_to: RecordRef | None = None

    @field_validator("prompt")
    @classmethod
    def _deidentified_prompt(cls, value: str) -> str:
        # the privacy boundary: only de-identified text is stored or published
        return deidentified_within(value, PROMPT_MAX_CHARS, "the prompt")

    @field_validator("keywords")
    @classmethod
    def _clean_keywords(cls, value: list[str]) -> list[str]:
        cleaned = [
            person_text(re.sub(r"\s+", " ", k).strip()) for k in value
        ]  # the privacy boundary
        if any(not k or len(k) > 100 for k in cleaned):
            raise ValueError("keywords must be 1-100 characters each")
        return list(dict.fromkeys(cleaned))

    @model_validator(mode="after")
    def _dates_in_order(self) -> SourceListRequest:
        if self.date_from and self.date_to and self.date_to < self.date_from:
            raise ValueError("date_to is before date_from")
        if (
            self.update_frequency is not None and duration_seconds(self.update_frequency) <= 0
        ):  # ValueError if malformed
            raise ValueError("update_frequency must be a positive duration")
        return self


class RequestSourceList(SourceListRequest):
    """Command: build (or re-build) a source list (published on `research.sourcelist.requested`).

    Every value is clamped to the workspace's admin limits before use; the clamped values are
    what the stored list and the API show.
    """

    run_id: str = Field(
        default_factory=lambda: new_run_id("sl"),
        pattern=RUN_ID_PATTERN,
        description="This run (its events: research.run.<run_id>.event); a run is built once.",
    )
    trigger: Literal["request", "schedule", "rerun"] = Field(default="request")
    origin: str = Field(default="api", max_length=100)


class Fact(BaseModel):
    """One discrete statement of a source, tagged with how directly the source states it."""

    statement: str = Field(min_length=1)
    confidence: FactConfidence


class ListedSource(BaseModel):
    """One reference of a source list (the seed's `sources[]` entry)."""

    source_id: uuid.UUID = Field(
        description="Stable across runs: derived from the DOI, PMID or normalised title."
    )
    title: str
    authors: list[str] = Field(default_factory=list)
    publication: str = Field(default="", description="Journal, conference, publisher or site.")
    date: dt.date | None = None
    doi: str | None = None
    url: str = ""
    origin_id: str = Field(
        default="",
        description="The id the source answered with, to look it up again: `corpus:<id>` "
        "for a corpus paper (the corpus tools' id), `pmid:…`, `doi:…`, `arxiv:…`.",
        examples=["corpus:4983"],
    )
    relevance_score: float = Field(ge=0.0, le=1.0)
    summary: str = Field(description="Abstract or a 2-4 sentence extractive summary (all levels).")
    extract: str | None = Field(
        default=None,
        description="Extended extract, key findings, methodology "
        "(citation_extract and facts_list).",
    )
    facts: list[Fact] | None = Field(
        default=None, description="Numbered factual statements (facts_list only)."
    )


class SourceList(BaseModel):
    """The seed's typed output: one snapshot of a source list."""

    run_id: str
    prompt: str
    keywords: list[str]
    source_type: SourceType
    detail_level: DetailLevel
    generated_at: dt.datetime
    next_run_at: dt.datetime | None = None
    sources: list[ListedSource] = Field(default_factory=list)
    note: str | None = Field(
        default=None,
        max_length=2000,
        description=(
            "Why the list is empty, when it is: what was searched, how many papers were read, the best candidate and why it "
            "fell short."
        ),
    )


class SourceChange(BaseModel):
    """One entry of a snapshot diff."""

    source_id: uuid.UUID
    title: str
    doi: str | None = None
    change: Literal["new", "changed", "dropped"]
    fields: list[str] = Field(
        default_factory=list, description="Changed metadata fields (`retracted` included)."
    )


class SourceListDiff(BaseModel):
    """What changed between two consecutive snapshots of a list."""

    previous_run_id: str | None = None
    new: list[SourceChange] = Field(default_factory=list)
    changed: list[SourceChange] = Field(default_factory=list)
    dropped: list[SourceChange] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.new or self.changed or self.dropped)


class SourceListUpdated(BaseModel):
    """Event on `research.sourcelist.updated`: a run of a list completed (with its diff)."""

    source_list_id: uuid.UUID
    run_id: str
    version: int = Field(ge=1)
    workspace: str = "default"
    trigger: str = "request"
    generated_at: dt.datetime
    next_run_at: dt.datetime | None = None
    sources: int = Field(ge=0, description="How many sources the snapshot holds.")
    diff: SourceListDiff
    save_to: RecordRef | None = None


__all__ = [
    "DURATION_PATTERN",
    "HARD_MAX_REFERENCES",
    "LANGUAGE_PATTERN",
    "DetailLevel",
    "Fact",
    "FactConfidence",
    "ListedSource",
    "RecordRef",
    "RequestSourceList",
    "SourceChange",
    "SourceList",
    "SourceListDiff",
    "SourceListUpdated",
    "SourceType",
    "duration_seconds",
]
