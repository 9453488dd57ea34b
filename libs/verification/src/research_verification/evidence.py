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
from research_verification.direction import conflict
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


@dataclass(frozen=True, slots=True)
class Rule:
    """When an abstract's verdict counts, as the shipped abstract model names it (`abstract.json`'s
    `thresholds`, chosen on held-out train claims by `bench/verdict_rules.py`).

    evidence / best_evidence: 1 − P(NEI) a paper needs (the most evidential paper of a call only
    `best_evidence`); contradict_weight: CONTRADICT's probability is weighed by it against
    SUPPORT's. support_bar / contradict_bar: the calibrated P(SUPPORT) / P(CONTRADICT) a paper
    needs for its side to count — under it, the paper is the closest evidence, not counted.
    sentence_floor: the sentence-level P(evidence) (the pair model's 1 − P(NEI)) its best quote
    needs: a quote that is not about the claim's own subject and outcome counts for nothing.
    direction: what a quote whose direction words point against the claim's does
    (`direction.conflict`): `off` (nothing), `abstain` (the paper is not counted), `flip` (a
    supporting label becomes a contradicting one). show_floor: the P(evidence) at which the call's
    most evidential paper, under its bar, is still shown as the closest evidence (never counted:
    the reader sees the nearest miss and why)."""

    evidence: float = 0.5
    best_evidence: float = 0.5
    contradict_weight: float = 1.0
    support_bar: float = 0.0
    contradict_bar: float = 0.0
    sentence_floor: float = 0.0
    direction: str = "off"
    show_floor: float = 1.0

    @classmethod
    def of(cls, limits: dict[str, Any]) -> Rule:
        evidence = float(limits.get("evidence", 0.5))
        return cls(
            evidence=evidence,
            best_evidence=min(evidence, float(limits.get("best_evidence", evidence))),
            contradict_weight=float(limits.get("contradict_weight", 1.0)),
            support_bar=float(limits.get("support_bar", 0.0)),
            contradict_bar=float(limits.get("contradict_bar", 0.0)),
            sentence_floor=float(limits.get("sentence_floor", 0.0)),
            direction=str(limits.get("direction", "off")),
            show_floor=float(limits.get("show_floor", 1.0)),
        )


@dataclass(frozen=True, slots=True)
class PaperCall:
    """One abstract's decision: the label that counts (NEI when none does), its calibrated
    probability, the sentences quoted (positions in the abstract), and — for a paper that leaned
    one way but did not count — the side it leaned to, the bar it missed and why."""

    label: str
    strength: float
    chosen: tuple[int, ...]
    leaning: str = ""  # SUPPORT / CONTRADICT the paper leaned to, when it did not count
    probability: float = 0.0  # P(leaning)
    bar: float = 0.0  # what it needed
    reason: str = ""


def decide_paper(
    claim: str,
    sentences: Sequence[str],
    probs: Sequence[float],
    rationale: np.ndarray,
    sentence_evidence: np.ndarray | None,
    names: Sequence[bool],
    rule: Rule,
    *,
    most_evidential: bool = False,
) -> PaperCall:
    """`Rule` applied to one abstract judged against `claim`: pure, so the verifier, the reviewer,
    the scout and the offline tuner (`bench/verdict_rules.py`) decide alike."""
    support, contradict, nei = (float(x) for x in probs)
    floor = rule.best_evidence if most_evidential else rule.evidence
    shown = most_evidential and 1.0 - nei >= rule.show_floor  # the call's nearest miss is shown
    if not sentences or (1.0 - nei < floor and not shown):
        return PaperCall("NEI", nei, ())
    label = "SUPPORT" if support >= contradict * rule.contradict_weight else "CONTRADICT"
    score = rationale if sentence_evidence is None else rationale + sentence_evidence
    score = score + SUBJECT_BONUS * np.asarray(names, dtype=np.float32)
    order = [int(i) for i in np.argsort(-score, kind="stable")[:QUOTES_PER_PAPER]]
    chosen = tuple(i for n, i in enumerate(order) if n == 0 or rationale[i] >= 0.5)
    best = chosen[0]

    def held_back(leaning: str, probability: float, bar: float, reason: str) -> PaperCall:
        """NEI for a paper that leaned to `leaning` but did not count, and why."""
        return PaperCall("NEI", nei, chosen, leaning, probability, bar, reason)

    if 1.0 - nei < floor:  # under the evidence bar: shown as the closest evidence, never counted
        return held_back(
            label,
            1.0 - nei,
            floor,
            f"P(evidence on the claim) {1.0 - nei:.2f} under the bar {floor:.2f}",
        )
    if rule.direction != "off" and (turned := conflict(claim, sentences[best])):
        if rule.direction == "flip" and label == "SUPPORT":
            label = "CONTRADICT"
            support, contradict = contradict, support
        elif rule.direction == "abstain":
            return held_back(
                label,
                support if label == "SUPPORT" else contradict,
                rule.support_bar if label == "SUPPORT" else rule.contradict_bar,
                f"its quote's {turned} words point the other way",
            )
    probability = support if label == "SUPPORT" else contradict
    bar = rule.support_bar if label == "SUPPORT" else rule.contradict_bar
    if probability < bar:
        return held_back(
            label,
            probability,
            bar,
            f"P({label}) {probability:.2f} under the bar {bar:.2f}",
        )
    if sentence_evidence is not None and float(sentence_evidence[best]) < rule.sentence_floor:
        return held_back(
            label,
            probability,
            bar,
            f"its best sentence is not about the claim (P {float(sentence_evidence[best]):.2f} under {rule.sentence_floor:.2f})",
        )
    return PaperCall(label, probability, chosen)


@dataclass(frozen=True, slots=True)
class Closest:
    """A paper that leaned one way but did not count: the report's "Closest evidence (not counted)"."""

    index: int  # its position among the papers judged
    label: str
    probability: float
    bar: float
    reason: str
    quote: SentencePrediction | None


def judge_abstracts(
    claim: str,
    papers: Sequence[tuple[str | None, Sequence[str]]],
    model: Any = None,
    judge: Judgement | Literal[False] | None = None,
    closest: list[Closest] | None = None,
) -> list[PaperJudgement]:
    """Each paper ((title, sentences)) judged whole against `claim` by the abstract-level model, its
    label decided by the shipped `Rule` (`decide_paper`): SUPPORT / CONTRADICT when P(evidence) =
    1 − P(NEI) reaches `evidence` (the most evidential paper of the call only `best_evidence`), the
    side's calibrated probability reaches its bar, its best quote is about the claim and its
    direction words do not point the other way; NEI otherwise. The quoted sentences are the
    abstract model's rationale probability plus the pair model's sentence evidence probability
    (`judge`; False: the abstract model's alone), `SUBJECT_BONUS` more for a sentence that names
    the claim's subject — the best one always, a second when it too is more likely a rationale than
    not. They carry the abstract's three probabilities: the model labels the abstract, the
    sentences are where it says so. A paper that leaned one way but missed is appended to
    `closest` (when given), with the bar it missed and why."""
    if model is None:
        from research_judgement.abstract import get_abstract_judge

        model = get_abstract_judge()
    subject = _subject(claim)
    rule = Rule.of(model.thresholds)
    judged = model.judge(claim, [(title or "", list(sentences)) for title, sentences in papers])
    best = max(range(len(judged)), key=lambda i: judged[i].evidence, default=None)
    out = []
    for n, ((title, sentences), j) in enumerate(zip(papers, judged, strict=True)):
        sentence_evidence = (
            None
            if judge is False or not sentences
            else _sentence_evidence(claim, title, sentences, judge)
        )
        names = [bool(subject) and names_subject(subject, s) for s in sentences]
        call = decide_paper(
            claim,
            sentences,
            j.probs,
            j.rationale,
            sentence_evidence,
            names,
            rule,
            most_evidential=n == best,
        )
        support, contradict, nei = (float(x) for x in j.probs)
        if call.label == "NEI":
            if closest is not None and call.leaning:
                quote = (
                    SentencePrediction(
                        sentences[call.chosen[0]], call.leaning, support, contradict, nei
                    )
                    if call.chosen
                    else None
                )
                closest.append(
                    Closest(n, call.leaning, call.probability, call.bar, call.reason, quote)
                )
            out.append(PaperJudgement("NEI", nei, (), ()))
            continue
        evidence = tuple(
            SentencePrediction(sentences[i], call.label, support, contradict, nei)
            if call.label == "SUPPORT" or support <= contradict
            else SentencePrediction(sentences[i], call.label, contradict, support, nei)
            for i in call.chosen
        )
        out.append(PaperJudgement(call.label, call.strength, evidence, call.chosen))
    return out
