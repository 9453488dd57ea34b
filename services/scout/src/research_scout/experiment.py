"""The refinement loop's pure work (seed 004): judge each hit, write the feedback memo, refine the query.

Offline engine, deterministic (no database, no broker, no remote model). Two judges (setting
`judge`):

- `judge_batch` (`abstract`, the default): the abstract-level evidence model reads each hit whole —
  title and every sentence — against the prompt (`research_verification.judge_abstracts`, the
  verifier's model and thresholds): `strong` when it finds evidence on the prompt (its label is
  SUPPORT or CONTRADICT), `partial` when P(evidence) = 1 − P(NEI) is at least the scout's
  `partial_evidence`, else `irrelevant`; the relevance is P(evidence), and a strong hit carries the
  rationale sentences the model rests on (its facts);
- `judge` (`chain`, the former gates) labels a hit `strong` / `partial` / `irrelevant` from the trained relevance model's
  calibrated probability that its title and abstract are about the prompt (`research_judgement`
  through `research_verification.on_topic`; the cut-offs are the ones the shipped model names,
  `research_verification.thresholds`), with a confidence in [0, 1] (clamped) and a one-line
  rationale naming that probability and the keywords found and missing (the loop's feedback); a
  source that never names what a question or claim prompt is about (its subject,
  `research_verification.asked_subject`) is irrelevant whatever its probability — a study of
  another intervention on the same outcome — and one under the on-topic cut is partial when one of
  its sentences squarely states a finding on the prompt (`research_verification.admits`, the
  verifier's rule: the relevance model's recall at its cut is low);
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

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from research_reports.text import STOPWORDS, content_tokens
from research_scout.prepare import Candidate
from research_verification import (
    Thresholds,
    admits,
    asked_subject,
    judge_abstracts,
    judge_paper,
    names_subject,
    on_topic,
    thresholds,
)
from research_verification.evidence import Judgement as Judge
from research_verification.stance import question_as_statement

Label = Literal["strong", "partial", "irrelevant"]
MODEL = "offline-scout-judgement"
EXPANSION_TERMS = 2


@dataclass(frozen=True)
class Judgement:
    """One hit's label, how sure the judge is, and why (one line)."""

    label: Label
    confidence: float
    rationale: str
    relevance: float
    model: str = MODEL
    facts: tuple[
        int, ...
    ] = ()  # the sentences (indices into the candidate's) the abstract model rests a strong hit on
    sure: bool = False  # the abstract model is as sure of its evidence as it must be of any paper (not only the best)


def clamp01(value: float) -> float:
    """Confidence and relevance always land in [0, 1] (seed 004: clamp before persisting)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return round(min(1.0, max(0.0, number)), 4)


def _terms(keyword: str) -> set[str]:
    return content_tokens(keyword) or {keyword.lower()}


def coverage(keywords: list[str], text: str) -> tuple[list[str], list[str]]:
    """(keywords found, keywords missing) in `text`; a keyword counts when all its content words occur."""
    words = content_tokens(text) | {w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)}
    found = [k for k in keywords if _terms(k) <= words]
    return found, [k for k in keywords if k not in found]


def judge(
    item: Candidate, keywords: list[str], prompt: str = "", model: Judge | None = None
) -> Judgement:
    """The offline judge: the relevance model's P(the source is about `prompt`) (the keywords
    stand for a prompt not given).

    strong ≥ `squarely_on_topic`, partial ≥ `on_topic` (or above the floor with a finding on the
    prompt squarely stated), irrelevant below or when the source never names what a question or
    claim prompt is about (`names_subject`); the confidence is how far
    the probability sits inside its band's side of the nearest cut-off."""
    title = item.hit.title
    found, missing = coverage(keywords, f"{title} {item.text}") if keywords else ([], [])
    limits = thresholds(model)
    relevance = clamp01(
        float(on_topic(prompt or " ".join(keywords), [(title or "", item.text or "")], model)[0])
    )
    subject = asked_subject(prompt) if prompt else ""
    named = names_subject(subject, f"{title} {item.text}")
    stated = ""
    if (
        not named
    ):  # a study of something else on the same outcome (collaborative care, asked about exercise)
        label: Label = "irrelevant"
        confidence = max(1.0 - relevance, 0.5)
    elif relevance >= limits.squarely_on_topic:
        label = "strong"
        confidence = relevance
    elif relevance >= limits.on_topic:
        label = "partial"
        confidence = 0.5 + min(relevance - limits.on_topic, limits.squarely_on_topic - relevance)
    elif prompt and (finding := _stated_finding(item, prompt, relevance, model, limits)):
        label = "partial"  # under the cut, but one of its sentences squarely states a finding on the prompt
        confidence = 0.5
        stated = finding
    else:
        label = "irrelevant"
        confidence = 1.0 - relevance
    parts = [f"P(about the prompt) {relevance:.2f} (relevance model)"]
    if not named:
        parts.append(f"never names {subject}")
    if stated:
        parts.append(stated)
    if keywords:
        parts.append(f"{len(found)}/{len(keywords)} keywords in title/abstract")
    if found:
        parts.append("found: " + ", ".join(found))
    if missing:
        parts.append("missing: " + ", ".join(missing))
    if not item.text:
        parts.append("no abstract")
    return Judgement(label, clamp01(confidence), "; ".join(parts), relevance)


def judge_batch(
    items: list[Candidate],
    keywords: list[str],
    prompt: str = "",
    model: object = None,
    judge: Judge | None = None,
    partial: float = 0.05,
) -> list[Judgement]:
    """The abstract model's judgement of a batch of hits against the prompt (as a statement: the
    form the model was trained on), one call: strong = evidence on the prompt (the verifier's
    thresholds: the batch's most evidential hit needs less), partial = P(evidence) ≥ `partial`."""
    if not items:
        return []
    claim = question_as_statement(prompt or " ".join(keywords))
    judged = judge_abstracts(claim, [(c.hit.title, c.sentences) for c in items], model, judge)
    sure = float(_model_thresholds(model).get("evidence", 0.5))
    out = []
    for item, paper in zip(items, judged, strict=True):
        evidence = clamp01(
            1.0 - paper.strength if paper.label == "NEI" else paper.evidence[0].evidence
        )
        found, missing = (
            coverage(keywords, f"{item.hit.title} {item.text}") if keywords else ([], [])
        )
        parts = [f"P(evidence on the prompt) {evidence:.2f} (abstract model)"]
        if paper.label != "NEI":
            label: Label = "strong"
            parts.append(
                f"{'supports' if paper.label == 'SUPPORT' else 'contradicts'} it (P {paper.strength:.2f})"
            )
        else:
            label = "partial" if evidence >= partial and item.sentences else "irrelevant"
        if keywords:
            parts.append(f"{len(found)}/{len(keywords)} keywords in title/abstract")
        if missing:
            parts.append("missing: " + ", ".join(missing))
        if not item.text:
            parts.append("no abstract")
        confidence = evidence if label != "irrelevant" else 1.0 - evidence
        out.append(
            Judgement(
                label,
                clamp01(confidence),
                "; ".join(parts),
                evidence,
                facts=paper.indices,
                sure=paper.label != "NEI" and evidence >= sure,
            )
        )
    return out


def _model_thresholds(model: object) -> dict[str, float]:
    if model is None:
        from research_judgement.abstract import get_abstract_judge

        model = get_abstract_judge()
    return dict(getattr(model, "thresholds", {}) or {})


def _stated_finding(
    item: Candidate, prompt: str, relevance: float, model: Judge | None, limits: Thresholds
) -> str:
    """Why a source under the on-topic cut still counts ("states a finding on it, P 0.72"), or ""."""
    if relevance < limits.floor or not item.sentences:
        return ""
    paper = judge_paper(question_as_statement(prompt), item.hit.title, item.sentences, model)
    return (
        f"states a finding on it (P {paper.strength:.2f})"
        if admits(relevance, paper, limits)
        else ""
    )


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
    lines = [
        f"{counts['partial']} partial and {counts['irrelevant']} irrelevant of {len(judged)} hits"
    ]
    if missing:
        lines.append(
            "most often missing: " + ", ".join(f"{k} ({n})" for k, n in missing.most_common(5))
        )
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
        word
        for word, n in counts.most_common()
        if n >= 2
        and word not in STOPWORDS
        and word not in known
        and not (content_tokens(word) & known)
    ][:EXPANSION_TERMS]
    return " ".join(kept + expansion).strip()


def same_query(a: str, b: str) -> bool:
    """Queries that would ask the same thing (case, order and spacing ignored)."""
    return sorted(a.lower().split()) == sorted(b.lower().split())


def stop_reason(
    *, strong: int, wanted: int, iteration: int, cap: int, next_query: str | None, tried: list[str]
) -> str | None:
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
