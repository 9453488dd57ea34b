"""Which papers and sentences are on the topic: the relevance cut (`TopicCut`), the sentence-level
rule (`on_topic`, `evidence_sentences`), the abstract-level one (`abstract_evidence`) and the peer
reviewer's off-topic check (`off_topic`), all by the trained models of `research_judgement`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from research_contracts.corpus_tools import PaperRecord
from research_judgement import AbstractDecision, abstract_decision
from research_judgement.coverage import terms, vocabulary
from research_llm.offline import lexicon
from research_reviewer.evidence import Sentence, sentences_of
from research_verification import judge_abstracts
from research_verification.evidence import FLOOR, STRONG_FINDING, Judgement


@dataclass(frozen=True, slots=True)
class TopicCut:
    """When a paper is on the topic: calibrated P(on topic) ≥ `on_topic`, or ≥ `floor` with a
    finding on the topic squarely stated (the abstract rule's strength ≥ `strong_finding`) — the
    verifier's `research_verification.admits`. The relevance model was trained on claims and puts
    many papers a noun-phrase topic names at 0.1–0.5 (docs/judgement.md, relevance recall)."""

    on_topic: float = 0.5
    floor: float = FLOOR
    strong_finding: float = STRONG_FINDING
    mode: str = "chain"  # "abstract": the abstract model, or the relevance model over `on_topic`; "abstract_only" (`abstract_evidence`)

    def admits(
        self, probability: float, decision: AbstractDecision | None, *, names_rarest: bool = True
    ) -> bool:
        """`names_rarest`: the paper names the topic's rarest word (`names_rarest_word`), which a paper
        admitted under the cut must — the stance model alone called a brown-fat macrophage paper
        a finding on cardiac macrophages."""
        if probability >= self.on_topic:
            return True
        return (
            probability >= self.floor
            and names_rarest
            and decision is not None
            and decision.label != "NEI"
            and decision.strength >= self.strong_finding
        )


def names_rarest_word(topic: str, title: str, text: str) -> bool:
    """Whether the paper uses the topic's rarest content word (SciFact document frequencies)."""
    rarest = vocabulary().rarest(topic)
    return rarest is None or rarest in terms(f"{title} {text}")


@dataclass(frozen=True, slots=True)
class OnTopic:
    paper: PaperRecord
    probability: float


def passage(paper: PaperRecord) -> tuple[str, str]:
    """The (title, text) the relevance model judges a paper by — the author and the peer reviewer alike."""
    return paper.title or "", paper.text or ""


def on_topic(
    judge: Judgement, topic: str, papers: list[PaperRecord], floor: float
) -> list[OnTopic]:
    """The papers the relevance model puts on `topic` (P ≥ `floor`), best first."""
    if not papers:
        return []
    scores = judge.relevance(topic, [passage(p) for p in papers])
    kept = [OnTopic(p, float(s)) for p, s in zip(papers, scores, strict=True) if s >= floor]
    return sorted(kept, key=lambda o: (-o.probability, o.paper.paper_id))


def evidence_sentences(
    judge: Judgement, topic: str, papers: list[OnTopic], cut: TopicCut | None = None
) -> list[Sentence]:
    """The sentences of on-topic papers the judge's abstract rule calls findings about `topic`, best first;
    `Sentence.relevance` is P(paper on topic) × P(evidence). One batched stance call for all papers.
    With `cut`, a paper under its `on_topic` gives sentences only when the cut admits it."""
    candidates = [(item, sentences_of(item.paper)) for item in papers]
    texts = [t for _, sentences in candidates for t in sentences]
    titles = [item.paper.title for item, sentences in candidates for _ in sentences]
    probs = judge.stance(topic, texts, titles) if texts else np.zeros((0, 3))
    found: list[Sentence] = []
    start = 0
    for item, sentences in candidates:
        rows = probs[start : start + len(sentences)]
        start += len(sentences)
        if not sentences:
            continue
        decision = decide(judge, rows)
        if (
            cut is not None
            and item.probability < cut.on_topic
            and not cut.admits(
                item.probability,
                decision,
                names_rarest=names_rarest_word(topic, *passage(item.paper)),
            )
        ):
            continue
        for i in decision.rationale_indices:
            found.append(
                Sentence(
                    item.paper, sentences[i], round(float(1.0 - rows[i, 2]) * item.probability, 6)
                )
            )
    return sorted(found, key=lambda s: (-s.relevance, s.paper.paper_id, s.text))


def spans(paper: PaperRecord) -> list[str]:
    """Every sentence of a paper's text, verbatim (how the abstract model reads it, title apart)."""
    return [span.text for span in lexicon.split_sentences(paper.text or "")]


def abstract_evidence(
    judge: Judgement | None,
    topic: str,
    papers: list[OnTopic],
    model: object = None,
    *,
    relevance_admits: float | None = None,
) -> tuple[list[OnTopic], list[Sentence]]:
    """The papers on `topic`, best first, and their findings. The abstract model reads each paper
    whole: one it finds evidence in is on the topic (`OnTopic.probability` = P(evidence)), its findings
    the rationale sentences it rests on that are candidate finding sentences (`sentences_of`),
    `Sentence.relevance` = P(evidence), a little less for a second one. With `relevance_admits`, a
    paper the relevance model puts at least that high (`OnTopic.probability` as given) is on the
    topic too — the abstract model, trained on claims, reads no evidence in many papers a noun-phrase
    topic names — and its findings are the sentence-level rule's (`evidence_sentences`)."""
    if not papers:
        return [], []
    texts = [spans(o.paper) for o in papers]
    judged = judge_abstracts(
        topic, [(o.paper.title, t) for o, t in zip(papers, texts, strict=True)], model, judge
    )
    kept: list[OnTopic] = []
    found: list[Sentence] = []
    by_relevance: list[OnTopic] = []
    for item, sentences, verdict in zip(papers, texts, judged, strict=True):
        paper = item.paper
        if verdict.label == "NEI" or not verdict.evidence:
            if relevance_admits is not None and item.probability >= relevance_admits:
                by_relevance.append(item)
            continue
        evidence = verdict.evidence[0].evidence
        kept.append(OnTopic(paper, evidence))
        candidates = set(sentences_of(paper))
        for rank, index in enumerate(verdict.indices):
            if sentences[index] in candidates:
                found.append(Sentence(paper, sentences[index], round(evidence - 0.01 * rank, 6)))
    if by_relevance and judge is not None:
        kept += by_relevance
        found += evidence_sentences(judge, topic, by_relevance)
    kept.sort(key=lambda o: (-o.probability, o.paper.paper_id))
    return kept, sorted(found, key=lambda s: (-s.relevance, s.paper.paper_id, s.text))


def decide(judge: Judgement, probs: np.ndarray) -> AbstractDecision:
    """The judge's abstract rule (its own `top_k`, `rationale` and `contradict_weight`) over (n, 3) stance rows."""
    return abstract_decision(probs, judge.thresholds)


def off_topic(
    judge: Judgement, topic: str, papers: list[tuple[str, str]], cut: TopicCut
) -> list[bool]:
    """Which (title, text) papers are off `topic`: the relevance model puts them under the cut's
    `on_topic` and the cut does not admit them on their stated findings (`TopicCut.admits`) — the
    peer reviewer's check and the benchmark's measure. With the cut's mode `abstract`: the abstract
    model finds no evidence on the topic in them (`abstract_evidence`, the author's rule)."""
    if not papers:
        return []
    if cut.mode in ("abstract", "abstract_only"):
        items = [
            OnTopic(PaperRecord(paper_id="", title=title, text=text), 0.0) for title, text in papers
        ]
        if cut.mode == "abstract":
            items = [
                OnTopic(o.paper, float(p))
                for o, p in zip(items, judge.relevance(topic, papers), strict=True)
            ]
        on, _ = abstract_evidence(
            judge, topic, items, relevance_admits=cut.on_topic if cut.mode == "abstract" else None
        )
        kept = {id(o.paper) for o in on}
        return [id(o.paper) not in kept for o in items]
    off = []
    for (title, text), p in zip(papers, judge.relevance(topic, papers), strict=True):
        decision = None
        named = True
        if cut.floor <= p < cut.on_topic and (named := names_rarest_word(topic, title, text)):
            sentences = sentences_of(PaperRecord(paper_id="", title=title, text=text))
            decision = (
                decide(judge, judge.stance(topic, sentences, [title] * len(sentences)))
                if sentences
                else None
            )
        off.append(not cut.admits(float(p), decision, names_rarest=named))
    return off
