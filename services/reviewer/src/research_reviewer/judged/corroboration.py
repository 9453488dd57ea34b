"""Findings and their sides: per subtopic the best evidence sentences of distinct papers
(`findings`), the other papers' sentences that support or contest each (`tag`), a finding another
already quotes folded into it (`fold_corroborations`), and one quote's stance (`stance_label`)."""

from __future__ import annotations

import numpy as np

from research_reviewer.evidence import (
    KeyFinding,
    Sentence,
    SubQuestion,
    checks_out,
    statement_of,
    supports_in_text,
)
from research_reviewer.judged.subtopics import Cluster, Embedder
from research_reviewer.judged.topic import decide, passage
from research_verification import null_result
from research_verification.direction import conflict
from research_verification.evidence import Judgement

RESTATES = 0.85  # cosine above which two findings say the same thing (one is kept)


def findings(embedder: Embedder, groups: list[Cluster], per_cluster: int) -> list[KeyFinding]:
    """Up to `per_cluster` findings per cluster: best sentences of distinct papers, none restating another."""
    out: list[KeyFinding] = []
    used: set[str] = set()
    kept: list[np.ndarray] = []
    for group in groups:
        assert group.question is not None
        taken = 0
        for sentence in group.members:
            if taken >= per_cluster:
                break
            if sentence.paper.paper_id in used or not checks_out(sentence):
                continue
            vectors = embedder.embed([sentence.text])
            vector = vectors[0] if vectors is not None else None
            if vector is not None and any(float(vector @ v) >= RESTATES for v in kept):
                continue
            out.append(
                KeyFinding(
                    key=f"{group.question.id}-F{taken + 1}", question=group.question, lead=sentence
                )
            )
            used.add(sentence.paper.paper_id)
            if vector is not None:
                kept.append(vector)
            taken += 1
    return out


def tag(
    judge: Judgement,
    finding: KeyFinding,
    pool: list[Sentence],
    *,
    floor: float = 0.5,
    agree_limit: int = 2,
    oppose_limit: int = 1,
) -> None:
    """Fill `finding.agreeing` / `.opposing` from the other papers' evidence sentences in `pool`.

    Only papers about what the finding says take a side: the relevance model reads each against the
    finding's statement (P ≥ `floor`) — a trial of another intervention on the same outcome neither
    corroborates nor contests it. Each such paper's sentences are read against the statement by the
    stance model and labelled by the judge's abstract rule; a SUPPORT paper agrees (its best
    rationale is quoted — that sentence alone must take the same side and report an effect, not a
    non-significant trend — and the paper must carry the statement's words for the citation
    checker), a CONTRADICT paper opposes."""
    statement = statement_of(finding.lead.text)
    by_paper: dict[str, list[Sentence]] = {}
    for s in pool:
        if s.paper.paper_id != finding.lead.paper.paper_id and s.text not in {
            o.text for o in by_paper.get(s.paper.paper_id, [])
        }:
            by_paper.setdefault(s.paper.paper_id, []).append(s)
    agreeing: list[tuple[float, Sentence]] = []
    opposing: list[tuple[float, Sentence]] = []
    groups = list(by_paper.values())
    if groups:
        about = judge.relevance(statement, [passage(sentences[0].paper) for sentences in groups])
        groups = [sentences for sentences, p in zip(groups, about, strict=True) if p >= floor]
    flat = [s for sentences in groups for s in sentences]
    if not flat:
        finding.agreeing, finding.opposing = [], []
        return
    probs_all = judge.stance(
        statement, [s.text for s in flat], [s.paper.title for s in flat]
    )  # one batch per finding
    start = 0
    for sentences in groups:
        probs = probs_all[start : start + len(sentences)]
        start += len(sentences)
        paper = sentences[0].paper
        decision = decide(judge, probs)
        if not decision.rationale_indices:
            continue
        best = max(decision.rationale_indices, key=lambda i: float(1.0 - probs[i, 2]))
        side = sentences[best]
        if decide(judge, probs[best : best + 1]).label != decision.label:
            continue  # the quoted sentence alone must take the side (what the peer reviewer checks)
        if (
            decision.label == "SUPPORT"
            and not null_result(side.text, statement)
            and conflict(statement, side.text)
            is None  # its direction words agree (the verifier's check)
            and supports_in_text(statement, f"{paper.title}\n{paper.text}".strip())
        ):
            agreeing.append((decision.strength, side))
        elif decision.label == "CONTRADICT" and checks_out(side):
            opposing.append((decision.strength, side))
    order = lambda pair: (-pair[0], pair[1].paper.paper_id)
    finding.agreeing = [s for _, s in sorted(agreeing, key=order)[:agree_limit]]
    finding.opposing = [s for _, s in sorted(opposing, key=order)[:oppose_limit]]


def fold_corroborations(
    found: list[KeyFinding], questions: list[SubQuestion]
) -> tuple[list[KeyFinding], list[SubQuestion]]:
    """A finding whose lead sentence an earlier finding already quotes as agreeing evidence is that
    finding's corroboration, not a finding of its own (the reader would meet the same quote twice,
    once SUPPORTED and once INSUFFICIENT): it is dropped, and so is a sub-question left without a
    finding — emptied so, or never answered (its cluster's sentences all came from papers an
    earlier subtopic already quotes): the review does not ask what it does not answer. The rest
    are numbered afresh (Q1, Q2, … and their findings' keys)."""
    quoted: set[str] = set()
    kept: list[KeyFinding] = []
    for finding in found:
        if finding.lead.text in quoted:
            continue
        kept.append(finding)
        quoted |= {s.text for s in finding.agreeing}
    answered = {f.question.id for f in kept}
    if len(kept) == len(found) and all(q.id in answered for q in questions):
        return found, questions
    renamed = {
        q.id: SubQuestion(f"Q{n}", q.text, q.query)
        for n, q in enumerate((q for q in questions if q.id in answered), start=1)
    }
    for finding in kept:
        old, new = finding.question.id, renamed[finding.question.id]
        finding.key = (
            new.id + finding.key[len(old) :] if finding.key.startswith(f"{old}-") else finding.key
        )
        finding.question = new
    return kept, list(renamed.values())


def stance_label(judge: Judgement, statement: str, sentence: str, title: str | None) -> str:
    """SUPPORT / CONTRADICT / NEI of one quoted sentence for a statement (the peer reviewer's tag check)."""
    return decide(judge, judge.stance(statement_of(statement), [sentence], [title])).label
