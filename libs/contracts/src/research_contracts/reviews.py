"""Literature-review contracts (seed 000): the `RequestReview` command (and `ReviewRequest`, the
part of it a caller may write), the `ReviewCompleted` event and the names of the evidence sources a
request may ask for.

`RequestReview` is what `POST /api/research/v1/reviews` publishes on `research.review.requested`
(JetStream `RESEARCH_REVIEWS`, consumed by the reviewer); publishing it directly is a supported
interface. Validation lives on the model, so the gateway answers 422 and the bus dead-letters
with the same reasons (empty or oversized topic, unknown source, more than two iterations).
"""

from __future__ import annotations

import re
import uuid
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from research_contracts.runs import RUN_ID_PATTERN
from research_privacy.boundary import PLACEHOLDER, person_text
from research_text import word_list

# Every evidence source the connector serves (`corpus` plus its outside connectors).
EVIDENCE_SOURCES: Final = (
    "corpus",
    "pubmed",
    "clinvar",
    "clinicaltrials",
    "europepmc",
    "crossref",
    "openalex",
    "semantic_scholar",
    "arxiv",
    "unpaywall",
    "nejm",
    "lww",
    "wiley",
    "elsevier",
    "nccn",
    "cochrane",
    "drugbank",
)
TOPIC_MAX_CHARS: Final = 500


def _class_body(codepoints: list[int]) -> str:
    """A character class's body naming exactly `codepoints`, as `\\uXXXX` ranges (both engines read them)."""
    runs: list[list[int]] = []
    for code in sorted(codepoints):
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


# Whitespace, spelled out: Python's `\s` (what the validators run) — U+0009–U+000D, U+001C–U+0020,
# U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. A published pattern
# must not say `\s`: ECMA-262's (a JSON Schema validator's, a fuzzer's) leaves out U+001C–U+001F and
# U+0085 and adds U+FEFF, so a topic ending in U+001C was schema-valid and refused.
WHITESPACE: Final = (
    *range(0x09, 0x0E),
    *range(0x1C, 0x21),
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)
BLANK: Final = f"[{_class_body(list(WHITESPACE))}]"
FILLED: Final = f"[^{_class_body(list(WHITESPACE))}]"


def deidentified_within(text: str, limit: int, what: str) -> str:
    """`text` through the privacy boundary (`person_text`), refused with a `ValueError` (a 422 with
    the reason) when its placeholders made it longer than `limit`: "[NAME_1]" is longer than
    "Al", so 490 characters of short names became more than the 500 the field allows, and the
    command built from it failed its own check as a 500."""
    cleaned = person_text(text)
    if len(cleaned) > limit:
        raise ValueError(
            f"{what} is longer than {limit} characters once personal identifiers are replaced by "
            f"placeholders ({len(cleaned)}); shorten it"
        )
    return cleaned


def worded_pattern(word: str, *, refused: str = "") -> str:
    """A pattern for text with at least 3 non-blank characters, one of them matching `word`,
    and (when `refused` is a character range) none in `refused` anywhere.

    Written without lookahead: JSON Schema's recommended regex subset has none, and test-data
    generators (schemathesis, Hypothesis) can only filter for one — which made fuzzing these
    bodies run for minutes. The three branches say where the `word` character is: first,
    second, or third-or-later of the non-blank ones. Blanks are `WHITESPACE`, never `\\s`.
    """
    if refused:
        kept = [c for c in WHITESPACE if not re.match(f"[{refused}]", chr(c))]
        blank, filled = f"[{_class_body(kept)}]", f"[^{_class_body(list(WHITESPACE))}{refused}]"
    else:
        blank, filled = BLANK, FILLED
    anything = rf"[^{refused}]" if refused else r"[\s\S]"
    b, f = blank + "*", filled
    worded = rf"^{b}(?:{word}{b}{f}{b}{f}|{f}{b}{word}{b}{f}|{f}{b}{f}{anything}*{word})"
    return worded + (rf"{anything}*$" if refused else "")


# Words: at least 3 non-space characters, one of them a letter or digit. The schema states it and
# the validator applies the same expression, so a schema-valid topic is never refused.
TOPIC_PATTERN: Final = worded_pattern(r"[^\W_]")
MAX_ITERATIONS: Final = 2
# The schema names every source (an enum), so a schema-valid request never meets "unknown source".
EvidenceSource = Literal[EVIDENCE_SOURCES]  # type: ignore[valid-type]  # mypy reads no Literal of a Final tuple; the schema does


_KEY_STOPWORDS = word_list("stopwords.review_key")


_LABELLED = re.compile(
    r"\b(?:dob|d\.o\.b\.?|date of birth|born|mrn|medical record(?: number)?|record|phone|tel|fax|e-?mail|"
    r"ssn|nhs(?: number)?|address|postcode|zip)\b[\s:#.,-]*(?=\[[A-Z_]+_\d+\])",
    re.IGNORECASE,
)


def review_run_id(review_id: uuid.UUID, suffix: str = "1") -> str:
    """The run id of a review command published on the bus without one (`effective_run_id`);
    the gateway never uses it: its run ids are `runs.new_run_id`'s, random."""
    return f"rv-{review_id.hex[:16]}-{suffix}"


def topic_key(topic: str) -> str:
    """The ledger entity of a review's claims: the topic's distinct words (≥ 3 letters, no
    function words), lower-case, in order. The gateway and the reviewer derive the same key."""
    # A placeholder (`[NAME_1]`) is no topic word: kept, its bare word ("name") reads as a person's;
    # nor is the label in front of one ("DOB [DATE_1]", "MRN [MRN_1]"): "patient dob mrn" reads as a name.
    words = re.findall(
        r"[a-z0-9][a-z0-9-]*", PLACEHOLDER.sub(" ", _LABELLED.sub(" ", topic)).lower()
    )
    kept = [w for w in words if len(w) > 2 and w not in _KEY_STOPWORDS]
    return " ".join(dict.fromkeys(kept))[:200] or topic.strip().lower()[:200]


class ReviewFilters(BaseModel):
    """Restrictions on the literature a review considers."""

    model_config = ConfigDict(extra="forbid")

    year_from: int | None = Field(default=None, ge=1000, le=2999, examples=[2010])
    year_to: int | None = Field(default=None, ge=1000, le=2999, examples=[2024])
    venue: str | None = Field(
        default=None, max_length=300, description="Only papers of this venue (corpus)."
    )

    @model_validator(mode="after")
    def _ordered(self) -> ReviewFilters:
        # "2024 to 2010" names the same years as "2010 to 2024": take the range the caller meant
        # rather than refuse a request the schema cannot describe as invalid.
        if (
            self.year_from is not None
            and self.year_to is not None
            and self.year_from > self.year_to
        ):
            self.year_from, self.year_to = self.year_to, self.year_from
        if self.venue:
            self.venue = person_text(
                self.venue
            )  # free text a person typed: the privacy boundary applies
        return self


class ReviewRequest(BaseModel):
    """What a caller may ask for (`POST /reviews`, the MCP `start_review` tool): the command's
    fields less the ones the server sets (`run_id`, `refresh`, `origin`), which a caller sending
    them is refused (422)."""

    model_config = ConfigDict(extra="forbid")

    review_id: uuid.UUID = Field(
        default_factory=uuid.uuid4, description="Id of the review (and its report)."
    )
    topic: str = Field(
        min_length=3,
        max_length=TOPIC_MAX_CHARS,
        description="The research topic or question.",
        json_schema_extra={"pattern": TOPIC_PATTERN},
        examples=["vitamin D supplementation and fracture risk in older adults"],
    )
    filters: ReviewFilters = Field(default_factory=ReviewFilters)
    sources: list[EvidenceSource] = Field(
        default_factory=lambda: ["corpus"],
        max_length=len(EVIDENCE_SOURCES),
        description="Evidence sources: the local corpus always, plus the outside connectors named here.",
        examples=[["corpus", "pubmed"]],
    )
    max_iterations: int = Field(
        default=MAX_ITERATIONS, ge=1, le=MAX_ITERATIONS, description="Author/reviewer rounds (≤ 2)."
    )

    @field_validator("topic")
    @classmethod
    def _topic_has_words(cls, value: str) -> str:
        if not re.search(TOPIC_PATTERN, value):
            raise ValueError("topic must contain words (at least 3 characters)")
        # the privacy boundary: only de-identified text goes on
        return deidentified_within(" ".join(value.split()), TOPIC_MAX_CHARS, "the topic")

    @field_validator("sources")
    @classmethod
    def _corpus_always(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(["corpus", *value]))


class RequestReview(ReviewRequest):
    """Command: write a literature review of `topic` (author → peer reviewer, ≤ 2 rounds)."""

    run_id: str | None = Field(
        default=None,
        pattern=RUN_ID_PATTERN,
        description="Run whose events trace the work (`research.run.<run_id>.event`); derived from the review id when empty.",
    )
    refresh: bool = Field(
        default=False,
        description="True when this run refreshes an existing review (a new version + diff).",
    )
    origin: str = Field(default="api", max_length=100)

    def effective_run_id(self) -> str:
        return self.run_id or review_run_id(self.review_id)


class ReviewCompleted(BaseModel):
    """Event on `research.review.completed` (stream `RESEARCH_REVIEWS`): a review run finished and
    stored its version (`Nats-Msg-Id` `review-completed-<run_id>`: a redelivered run is announced
    once). A run that failed ends its run events with `done(failed)` and publishes no event."""

    review_id: uuid.UUID = Field(description="The review (and its report).")
    run_id: str = Field(
        description="The run that wrote this version (its events: `research.run.<run_id>.event`)."
    )
    version: int = Field(ge=1, description="The report version the run stored (1 = the first).")
    verdict: str = Field(
        max_length=40,
        description="The peer review's verdict of the final round (PASS or REVISION_NEEDED).",
    )
    iterations: int = Field(ge=1, description="Author/reviewer rounds the run took.")
    claims: int = Field(
        ge=0,
        description="Claims resting on the version's key findings (pending ones go to the critic).",
    )
    refresh: bool = Field(
        default=False, description="True when the run refreshed an existing review."
    )

    def msg_id(self) -> str:
        return f"review-completed-{self.run_id}"
