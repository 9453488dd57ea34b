"""The refinement loop's pure work (seed 004): judge each hit, write the feedback memo, refine the query.

Offline engine, deterministic (no database, no broker, no model):

- `judge` labels a hit `strong` / `partial` / `irrelevant` from how many of the list's keywords
  its title and abstract cover, with a confidence in [0, 1] (clamped) and a one-line rationale
  naming the keywords found and missing;
- `memo` condenses the non-strong rationales into the feedback the next query is built from;
- `refine` builds that query by pseudo-relevance feedback: keywords no hit contains are dropped
  (a vocabulary the sources do not use), and the terms most shared by the partial hits' titles
  are added;
- `stop_reason` holds the three stop rules: enough strong hits, the iteration cap, an empty or
  repeated query.

The LLM engine (`research_scout.llm`) answers `judge` and `refine` through the provider chain
with JSON schemas; both engines produce the same `Judgement`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from research_reports.text import STOPWORDS, content_tokens
from research_scout.prepare import Candidate

Label = Literal["strong", "partial", "irrelevant"]
STRONG_COVERAGE = 0.75
PARTIAL_COVERAGE = 0.34
EXPANSION_TERMS = 2


@dataclass(frozen=True)
class Judgement:
    """One hit's label, how sure the judge is, and why (one line)."""

    label: Label
    confidence: float
    rationale: str
    relevance: float
    model: str = "offline-scout"


def clamp01(value: float) -> float:
    """Confidence and relevance always land in [0, 1] (seed 004: clamp before persisting)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if number != number:  # NaN
        return 0.0
    return round(min(1.0, max(0.0, number)), 4)


def _terms(keyword: str) -> set[str]:
    return content_tokens(keyword) or {keyword.lower()}


def coverage(keywords: list[str], text: str) -> tuple[list[str], list[str]]:
    """(keywords found, keywords missing) in `text`; a keyword counts when all its content words occur."""
    words = content_tokens(text) | {w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)}
    found = [k for k in keywords if _terms(k) <= words]
    return found, [k for k in keywords if k not in found]


def judge(item: Candidate, keywords: list[str]) -> Judgement:
    """The offline judge: keyword coverage of title + abstract, the title weighing extra."""
    if not keywords:
        return Judgement("irrelevant", 0.0, "no keywords to judge against", 0.0)
    title = item.hit.title
    found, missing = coverage(keywords, f"{title} {item.text}")
    in_title, _ = coverage(keywords, title)
    share = len(found) / len(keywords)
    title_share = len(in_title) / len(keywords)
    relevance = clamp01(0.7 * share + 0.3 * title_share)
    if share >= STRONG_COVERAGE and (in_title or item.text):
        label: Label = "strong"
        confidence = 0.5 + (share - STRONG_COVERAGE) * 2 + (0.1 if in_title else 0.0)
    elif share >= PARTIAL_COVERAGE or in_title:
        label = "partial"
        confidence = 0.5 + min(abs(share - PARTIAL_COVERAGE), abs(STRONG_COVERAGE - share))
    else:
        label = "irrelevant"
        confidence = 0.5 + (PARTIAL_COVERAGE - share)
    parts = [f"{len(found)}/{len(keywords)} keywords in title/abstract"]
    if found:
        parts.append("found: " + ", ".join(found))
    if missing:
        parts.append("missing: " + ", ".join(missing))
    if not item.text:
        parts.append("no abstract")
    return Judgement(label, clamp01(confidence), "; ".join(parts), relevance)


def memo(judged: list[tuple[Candidate, Judgement]]) -> str:
    """The feedback memo: what the non-strong hits lacked (strong hits are left out, seed 004)."""
    weak = [(c, j) for c, j in judged if j.label != "strong"]
    if not weak:
        return ""
    missing: Counter[str] = Counter()
    for _, verdict in weak:
        for part in verdict.rationale.split("; "):
            if part.startswith("missing: "):
                missing.update(part.removeprefix("missing: ").split(", "))
    counts = Counter(j.label for _, j in weak)
    lines = [f"{counts['partial']} partial and {counts['irrelevant']} irrelevant of {len(judged)} hits"]
    if missing:
        lines.append("most often missing: " + ", ".join(f"{k} ({n})" for k, n in missing.most_common(5)))
    return "; ".join(lines)


def refine(query: str, keywords: list[str], judged: list[tuple[Candidate, Judgement]]) -> str:
    """The next query from the feedback: drop the keywords no hit contains, add the terms most
    shared by partial hits' titles. Returns "" when nothing is left."""
    texts = [f"{c.hit.title} {c.text}" for c, _ in judged]
    present = [k for k in keywords if any(not coverage([k], t)[1] for t in texts)]
    kept = present if len(present) >= 2 or not keywords else keywords[: max(1, len(present))]
    counts: Counter[str] = Counter()
    for item, verdict in judged:
        if verdict.label == "partial":
            counts.update({w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", item.hit.title)})
    known = {t for k in kept for t in _terms(k)} | {w.lower() for k in kept for w in k.split()}
    expansion = [
        word for word, n in counts.most_common()
        if n >= 2 and word not in STOPWORDS and word not in known and not (content_tokens(word) & known)
    ][:EXPANSION_TERMS]
    return " ".join(kept + expansion).strip()


def same_query(a: str, b: str) -> bool:
    """Queries that would ask the same thing (case, order and spacing ignored)."""
    return sorted(a.lower().split()) == sorted(b.lower().split())


def stop_reason(*, strong: int, wanted: int, iteration: int, cap: int, next_query: str | None,
                tried: list[str]) -> str | None:
    """Why the loop stops after `iteration`, or None to go on (seed 004's three rules)."""
    if strong >= wanted:
        return "enough_strong"
    if iteration >= cap:
        return "iteration_cap"
    if next_query is None or not next_query.strip():
        return "empty_query"
    if any(same_query(next_query, earlier) for earlier in tried):
        return "repeated_query"
    return None
