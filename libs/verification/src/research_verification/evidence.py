"""The trained judgement as verification asks it: is a paper about the claim, which of its
sentences are evidence, and which way they point (`research_judgement`: cross-encoders trained
on SciFact train, calibrated probabilities).

    thresholds(judge) -> Thresholds                         the named cut-offs, read from the shipped models
    on_topic(claim, papers, judge) -> (n,)                  P(each (title, text) is about the claim)
    judge_paper(claim, title, sentences, judge) -> PaperJudgement
                                                            its evidence sentences, labelled, best first
    admits(probability, paper, limits) -> bool              on topic, or under the cut with a finding squarely stated

Every mode that judges evidence against a claim (the verifier's offline engine, the critic's
non-answer check, the replicator's re-run) goes through here, so one model and one set of
thresholds decide. The thresholds are not constants of this module: they ship with the weights
(`judgement.json`, tuned on held-out train claims), so retrained models bring their own.

`Judgement` is the seam: anything with `stance`, `relevance`, `thresholds` and `config` (the
`research_judgement.Judge`, or a test's fixed-probability judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from research_judgement.metrics import abstract_decision
from research_verification.claims import names_subject, parse_claim
from research_verification.errors import ClaimParseError
from research_verification.passages import LABELS, SentencePrediction

DEFAULT_ON_TOPIC = 0.5  # when the shipped relevance model names no threshold of its own
FLOOR, STRONG_FINDING = (
    0.1,
    0.6,
)  # see `Thresholds` (chosen on fold 0's train claims, bench:verify_e2e)


class Judgement(Protocol):
    config: dict[str, Any]

    @property
    def thresholds(self) -> dict[str, float]: ...

    def stance(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray: ...

    def evidence(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray: ...

    def relevance(self, question: str, passages: Sequence[str | tuple[str, str]]) -> np.ndarray: ...


def default_judge() -> Judgement:
    """The process-wide judge (`research_judgement.get_judge`; models load on first use)."""
    from research_judgement import get_judge

    return get_judge()


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The cut-offs every caller uses, as the shipped models name them.

    evidence: P(a finding bearing on the claim) = 1 − P(NEI) a sentence needs to be evidence
    (the pair model's `rationale`, which SciFact's abstract-level rule also uses); sure_evidence:
    … to be stated with high confidence; on_topic: P(about the claim) a paper needs (the relevance
    model's `threshold`); squarely_on_topic: … to be a strong hit of a source list. A threshold the
    shipped `judgement.json` does not name sits halfway between the one below it and 1.

    The relevance model's recall at `on_topic` is low (0.54 for claims, docs/judgement.md), so a
    paper between `floor` and `on_topic` still counts when one of its sentences squarely states a
    finding on the claim: the abstract rule's strength at least `strong_finding` (`admits`).
    Defaults chosen on fold 0's train claims (`bench:verify_e2e`, docs/benchmarks.md)."""

    evidence: float
    sure_evidence: float
    on_topic: float
    squarely_on_topic: float
    floor: float = FLOOR
    strong_finding: float = STRONG_FINDING


def thresholds(judge: Judgement | None = None) -> Thresholds:
    judge = judge or default_judge()
    pair = judge.thresholds
    named = judge.config.get("relevance", {}).get("thresholds", {})
    evidence = float(pair.get("rationale", 0.5))
    on_topic = float(
        judge.config.get("relevance", {}).get("threshold", named.get("on_topic", DEFAULT_ON_TOPIC))
    )
    return Thresholds(
        evidence=evidence,
        sure_evidence=float(pair.get("sure", (1 + evidence) / 2)),
        on_topic=on_topic,
        squarely_on_topic=float(named.get("strong", (1 + on_topic) / 2)),
        floor=float(named.get("floor", FLOOR)),
        strong_finding=float(pair.get("strong_finding", STRONG_FINDING)),
    )


def on_topic(
    claim: str, papers: Sequence[tuple[str, str]], judge: Judgement | None = None
) -> np.ndarray:
    """(n,) calibrated P(each paper, as (title, text), is about `claim`)."""
    if not papers:
        return np.zeros(0, dtype=np.float32)
    return (judge or default_judge()).relevance(claim, list(papers))


@dataclass(frozen=True, slots=True)
class PaperJudgement:
    """One paper against one claim: SUPPORT / CONTRADICT / NEI, how strongly, and the sentences it rests on."""

    label: str
    strength: float
    evidence: tuple[SentencePrediction, ...]  # its evidence sentences, most evidential first
    indices: tuple[int, ...]  # their positions among the sentences judged

    @property
    def best(self) -> SentencePrediction | None:
        return self.evidence[0] if self.evidence else None


def predictions(sentences: Sequence[str], probs: np.ndarray) -> list[SentencePrediction]:
    """Each sentence with its most probable label and its three probabilities."""
    return [
        SentencePrediction(s, LABELS[int(np.argmax(p))], float(p[0]), float(p[1]), float(p[2]))
        for s, p in zip(sentences, probs, strict=True)
    ]


def judge_paper(
    claim: str, title: str | None, sentences: Sequence[str], judge: Judgement | None = None
) -> PaperJudgement:
    """`sentences` of one paper judged against `claim` (titled pairs, the models' trained form)."""
    if not sentences:
        return PaperJudgement("NEI", 1.0, (), ())
    judge = judge or default_judge()
    probs = judge.stance(claim, list(sentences), [title or None] * len(sentences))
    decision = abstract_decision(
        probs, judge.thresholds
    )  # SciFact's abstract-level rule, the shipped thresholds
    judged = predictions(sentences, probs)
    chosen = sorted(decision.rationale_indices, key=lambda i: -judged[i].evidence)
    return PaperJudgement(
        decision.label, decision.strength, tuple(judged[i] for i in chosen), tuple(chosen)
    )


def admits(probability: float, paper: PaperJudgement, limits: Thresholds) -> bool:
    """Whether a paper the relevance model puts at `probability`, judged `paper`, is evidence on the
    claim: on topic with a finding, or between `floor` and `on_topic` with one squarely stated."""
    if paper.label == "NEI" or probability < limits.floor:
        return False
    return probability >= limits.on_topic or paper.strength >= limits.strong_finding


QUOTES_PER_PAPER = (
    2  # rationale sentences quoted from an abstract the abstract model finds evidence in
)
SUBJECT_BONUS = 0.25  # added to a sentence's quote score when it names the claim's subject (held-out fold: 0.708 → 0.717)


def _subject(claim: str) -> str:
    try:
        statements = parse_claim(claim)
    except ClaimParseError:
        return ""
    return statements[0].subject if statements else ""


def abstract_model_available() -> bool:
    """Whether the abstract-level evidence model ships (`research_judgement.abstract`)."""
    from research_judgement.abstract import available

    return available()


def _sentence_evidence(
    claim: str, title: str | None, sentences: Sequence[str], judge: Judgement | None
) -> np.ndarray:
    stance = (judge or default_judge()).stance(
        claim, list(sentences), [title or None] * len(sentences)
    )
    return 1.0 - stance[:, 2]


def judge_abstracts(
    claim: str,
    papers: Sequence[tuple[str | None, Sequence[str]]],
    model: Any = None,
    judge: Judgement | Literal[False] | None = None,
) -> list[PaperJudgement]:
    """Each paper ((title, sentences)) judged whole against `claim` by the abstract-level model: its
    label (SUPPORT / CONTRADICT when P(evidence) = 1 − P(NEI) reaches the shipped `evidence`
    threshold; CONTRADICT's probability weighed by `contradict_weight`), how strongly (P(label)),
    and the rationale sentences it rests on, most probable first (the best one always, a second
    when it too is more likely a rationale than not). The quoted sentences carry the abstract's
    three probabilities: the model labels the abstract, the sentences are where it says so. Which
    sentences: the abstract model's rationale probability plus the pair model's sentence evidence
    probability (`judge`; False: the abstract model's alone) — on the held-out fold's gold abstracts
    the best sentence is a gold rationale 0.71 of the time with both, 0.61 with the abstract model's
    alone, 0.68 with the pair model's alone; a sentence that names the claim's subject gets
    `SUBJECT_BONUS` more, so the quote reads on its own (0.72; the demo's HF-ACTION quote is its
    "sustained, greater improvement overall for the exercise group (P < .001)", not "Improvements
    occurred early and persisted over time").

    The most evidential paper of the call needs only `best_evidence`: most claims rest on one
    abstract, which the model often scores under the bar the others must clear (tuned with the other
    thresholds on the held-out fold: claims citing nothing 0.22 → 0.06, label-only F1 0.525 → 0.540,
    docs/judgement.md)."""
    if model is None:
        from research_judgement.abstract import get_abstract_judge

        model = get_abstract_judge()
    subject = _subject(claim)
    limits = model.thresholds
    evidence_floor, weight = (
        float(limits.get("evidence", 0.5)),
        float(limits.get("contradict_weight", 1.0)),
    )
    judged = model.judge(claim, [(title or "", list(sentences)) for title, sentences in papers])
    best = max(range(len(judged)), key=lambda i: judged[i].evidence, default=None)
    out = []
    for n, ((title, sentences), j) in enumerate(zip(papers, judged, strict=True)):
        support, contradict, nei = (float(x) for x in j.probs)
        floor = (
            min(evidence_floor, float(limits.get("best_evidence", evidence_floor)))
            if n == best
            else evidence_floor
        )
        if not sentences or 1.0 - nei < floor:
            out.append(PaperJudgement("NEI", nei, (), ()))
            continue
        label = "SUPPORT" if support >= contradict * weight else "CONTRADICT"
        score = (
            j.rationale
            if judge is False
            else j.rationale + _sentence_evidence(claim, title, sentences, judge)
        )
        if subject:  # a quote that names what the claim is about reads on its own
            score = score + SUBJECT_BONUS * np.array(
                [names_subject(subject, s) for s in sentences], dtype=np.float32
            )
        order = [int(i) for i in np.argsort(-score, kind="stable")[:QUOTES_PER_PAPER]]
        chosen = tuple(i for n, i in enumerate(order) if n == 0 or j.rationale[i] >= 0.5)
        evidence = tuple(
            SentencePrediction(sentences[i], label, support, contradict, nei) for i in chosen
        )
        out.append(
            PaperJudgement(label, support if label == "SUPPORT" else contradict, evidence, chosen)
        )
    return out
