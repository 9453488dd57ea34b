"""Normalise a source-list request and the hits that come back; fail fast on bad input.

`brief` holds a request to the workspace's limits (research_ledger.source_limits.clamp),
fills in the keywords when the caller gave none (extracted from the prompt, shown back), routes
the source type to the APIs the workspace allows, and turns the date range into the filters the
connector understands. Identifiers in the prompt never reach a query: keywords are taken from
the de-identified prompt (placeholders dropped).

`candidate` turns a connector `SourceHit` into what the judging and the extraction work on:
a stable identity (DOI, else PMID, else normalised title → a uuid5 `source_id`, so the same
paper keeps its id across runs and across sources) and the text the facts must come from.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import date

from research_contracts import SourceHit, TaskFilters
from research_contracts.sourcelists import RequestSourceList, SourceType
from research_ledger.source_limits import ACADEMIC_APIS, WorkspaceLimits, clamp
from research_platform.errors import PrepareError
from research_privacy import deidentify, find_identifiers
from research_reports.text import STOPWORDS, split_sentences
from research_text import word_list

MAX_KEYWORDS = 8
SOURCE_NAMESPACE = uuid.UUID("6d3f2b9e-58c1-4c7a-9a43-5f0c2f3e8a11")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
# Question words and fillers a prompt is made of that no paper is about.
_PROMPT_FILLER = word_list("words.prompt_filler")


@dataclass(frozen=True)
class Brief:
    """A request ready to run: clamped, with keywords, routed sources and connector filters."""

    request: RequestSourceList
    keywords: list[str]
    sources: list[str]
    filters: TaskFilters
    query: str


def extract_keywords(prompt: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Content words of `prompt` in order of appearance; a short token that follows a word stays
    with it ("vitamin D", "type 2"), so an anchor is not split into noise."""
    plain = _PLACEHOLDER.sub(" ", deidentify(prompt).text)
    tokens = [m.group(0).strip("'-") for m in _TOKEN.finditer(plain)]
    keywords: list[str] = []
    for index, token in enumerate(tokens):
        lower = token.lower()
        if (
            len(token) <= 2
            and index > 0
            and keywords
            and tokens[index - 1].lower() == keywords[-1].split()[-1].lower()
        ):
            if token.isupper() or token.isdigit():
                keywords[-1] = f"{keywords[-1]} {token}"
            continue
        if (
            lower in STOPWORDS
            or lower in _PROMPT_FILLER
            or len(token) < 3
            or find_identifiers(token)
        ):
            continue  # a keyword is stored and shown: never a fragment the de-identifier reads as one (".001" → "001")
        if lower not in (k.lower() for k in keywords):
            keywords.append(token if token.isupper() else lower)
    return keywords[:limit]


def route(source_type: SourceType, allowed_apis: list[str]) -> list[str]:
    """The connector sources of a source type, restricted to the APIs the workspace allows:
    academic → the scholarly APIs and the local corpus; general → Tavily; news → Tavily's news topic."""
    if source_type is SourceType.academic:
        return [api for api in ACADEMIC_APIS if api in allowed_apis]
    if "tavily" not in allowed_apis:
        return []
    return ["tavily"] if source_type is SourceType.general else ["tavily_news"]


def brief(request: RequestSourceList, limits: WorkspaceLimits) -> Brief:
    """Clamp, extract keywords, route; raises `PrepareError` when nothing is left to search for."""
    held = clamp(request, limits)
    keywords = list(held.keywords) or extract_keywords(held.prompt)
    if not keywords:
        raise PrepareError("the prompt has no searchable words; give keywords")
    held = held.model_copy(update={"keywords": keywords})
    filters = TaskFilters(
        year_from=held.date_from.year if held.date_from else None,
        year_to=held.date_to.year if held.date_to else None,
    )
    return Brief(
        held, keywords, route(held.source_type, limits.allowed_apis), filters, " ".join(keywords)
    )


# --- hits --------------------------------------------------------------------------------------
@dataclass
class Candidate:
    """One paper or page found by a search, with its identity and the text it can be quoted from."""

    key: str
    source_id: uuid.UUID
    hit: SourceHit
    sentences: list[str] = field(default_factory=list)
    seen_in: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """What the source says (its abstract or snippet): every fact must be a sentence of it."""
        return " ".join(self.sentences)

    @property
    def published(self) -> date | None:
        if self.hit.date:
            return self.hit.date
        return date(self.hit.year, 1, 1) if self.hit.year else None

    @property
    def retracted(self) -> bool:
        return bool(self.hit.metadata.get("retracted"))


def normalised_title(title: str) -> str:
    return re.sub(r"\W+", " ", title.lower()).strip()


def identity(hit: SourceHit) -> str:
    """DOI, else PMID, else the normalised title: how one paper is recognised across sources."""
    if hit.doi:
        return "doi:" + hit.doi.lower().removeprefix("https://doi.org/")
    pmid = hit.metadata.get("pmid") or (
        hit.source_id.removeprefix("pmid:") if hit.source_id.startswith("pmid:") else None
    )
    if pmid:
        return f"pmid:{pmid}"
    if hit.title.strip():
        return "title:" + normalised_title(hit.title)
    return hit.source_id


def candidate(hit: SourceHit) -> Candidate:
    key = identity(hit)
    return Candidate(
        key=key,
        source_id=uuid.uuid5(SOURCE_NAMESPACE, key),
        hit=hit,
        sentences=split_sentences(hit.abstract or ""),
        seen_in=[hit.source],
    )


def within_dates(item: Candidate, date_from: date | None, date_to: date | None) -> bool:
    """Whether a candidate falls in the requested range (an undated one is kept: absence is not
    evidence; the APIs already applied the year filter where they could)."""
    when = item.hit.date
    if when is None:
        return True
    return not ((date_from and when < date_from) or (date_to and when > date_to))


def merge(found: list[Candidate], into: dict[str, Candidate]) -> list[Candidate]:
    """Add `found` to `into` de-duplicated by identity (DOI, PMID, normalised title — a second
    copy fills missing metadata of the first); returns the candidates new to `into`."""
    titles = {normalised_title(c.hit.title): key for key, c in into.items() if c.hit.title}
    fresh: list[Candidate] = []
    for item in found:
        key = (
            item.key if item.key in into else titles.get(normalised_title(item.hit.title), item.key)
        )
        known = into.get(key)
        if known is None:
            into[item.key] = item
            if item.hit.title:
                titles[normalised_title(item.hit.title)] = item.key
            fresh.append(item)
            continue
        _fill(known, item)
    return fresh


def _fill(known: Candidate, other: Candidate) -> None:
    hit, extra = known.hit, other.hit
    updates = {}
    for name in ("doi", "url", "venue", "date", "year"):
        if getattr(hit, name) in (None, "") and getattr(extra, name) not in (None, ""):
            updates[name] = getattr(extra, name)
    if not hit.authors and extra.authors:
        updates["authors"] = extra.authors
    if len(extra.abstract or "") > len(hit.abstract or ""):
        updates["abstract"] = extra.abstract
        known.sentences = other.sentences
    if extra.metadata.get("retracted") and not hit.metadata.get("retracted"):
        updates["metadata"] = {**hit.metadata, "retracted": True}
    if updates:
        known.hit = hit.model_copy(update=updates)
    known.seen_in = list(dict.fromkeys(known.seen_in + other.seen_in))
