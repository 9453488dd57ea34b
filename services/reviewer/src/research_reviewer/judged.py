"""The author's judgement, by the trained models of `research_judgement` (docs/judgement.md).

1. `on_topic` — the retrieved papers the relevance model puts on the topic (calibrated
   P(on topic) ≥ the reviewer's `relevance_floor`, or over the cut's `floor` with a finding squarely
   stated: `TopicCut`), best first: a hybrid search found them, the cross-encoder reranks and
   filters them.
2. `evidence_sentences` — per on-topic paper, the candidate sentences (`evidence.sentences_of`:
   results and conclusions, never background / aims / design) the judge's own abstract rule calls
   rationales for the topic (its `top_k` and `rationale` thresholds, `Judge.thresholds`).
3. `clusters` — those sentences grouped by subtopic (average-linkage on MiniLM cosine), each named
   by the phrases that set it apart from the rest of the on-topic literature, as a question.
4. `findings` — per cluster, the best evidence sentences of distinct papers, none restating another,
   each one the citation checker accepts.
5. `tag` — the stance model reads each finding against the evidence sentences of every other paper
   the relevance model puts on the finding's own subject, with the judge's abstract rule: a paper
   whose sentences support it makes the finding SUPPORTED, one whose sentences contradict it makes
   it CONTESTED (both sides quoted), none leaves it INSUFFICIENT.

With the reviewer's `judge` setting `abstract`, steps 1 and 2 are one: the abstract-level evidence
model reads each paper the relevance model ranks first whole — title and every sentence — against
the topic (`abstract_evidence`, `research_verification.judge_abstracts`, the verifier's model and
thresholds): a paper is on the topic when it finds evidence on it, and its findings are the
rationale sentences it rests on (candidate sentences only); a paper the relevance model puts over
the cut is on the topic too, with the sentence-level rule's findings (`abstract_only`: the abstract
model alone). The peer reviewer's off-topic check asks the same (`off_topic`). `chain` keeps the
relevance cut, admit floor and rarest-word rule above.

No threshold here is fitted to a set of weights: the relevance floor and the subtopic settings are
named reviewer settings, the evidence and stance thresholds are the judge's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from research_contracts.corpus_tools import PaperRecord
from research_judgement import AbstractDecision, abstract_decision
from research_judgement.coverage import terms, vocabulary
from research_llm.offline import lexicon
from research_reviewer.evidence import (
    KeyFinding,
    Sentence,
    SubQuestion,
    asking,
    checks_out,
    sentences_of,
    statement_of,
    supports_in_text,
)
from research_text import word_list
from research_verification import judge_abstracts, null_result
from research_verification.direction import conflict
from research_verification.evidence import FLOOR, STRONG_FINDING, Judgement

RESTATES = 0.85  # cosine above which two findings say the same thing (one is kept)
_PHRASE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9α-ωΑ-Ω+/-]*[A-Za-z0-9+]|[A-Za-z]")


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray | None: ...


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
        decision = _decide(judge, rows)
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


def _decide(judge: Judgement, probs: np.ndarray) -> AbstractDecision:
    """The judge's abstract rule (its own `top_k`, `rationale` and `contradict_weight`) over (n, 3) stance rows."""
    return abstract_decision(probs, judge.thresholds)


@dataclass
class Cluster:
    """Evidence sentences about one subtopic; `question` names it for the reader."""

    members: list[Sentence] = field(default_factory=list)
    question: SubQuestion | None = None

    @property
    def papers(self) -> set[str]:
        return {s.paper.paper_id for s in self.members}


def clusters(
    embedder: Embedder,
    topic: str,
    sentences: list[Sentence],
    background: list[str],
    *,
    similarity: float,
    most: int,
) -> list[Cluster]:
    """`sentences` grouped by subtopic, at most `most` groups, largest (in papers) first, each named.

    Average-linkage agglomeration on cosine: two groups merge while their mean pairwise cosine is at
    least `similarity`, then the closest pairs merge until `most` are left. `background` (the titles
    and candidate sentences of the on-topic papers) is what a cluster's name must stand out from."""
    if not sentences:
        return []
    vectors = embedder.embed([s.text for s in sentences])
    groups: list[list[int]] = [[i] for i in range(len(sentences))]
    if vectors is not None and len(sentences) > 1:
        cos = vectors @ vectors.T
        while len(groups) > 1:
            best, pair = -2.0, (0, 1)
            for a in range(len(groups)):
                for b in range(a + 1, len(groups)):
                    value = float(cos[np.ix_(groups[a], groups[b])].mean())
                    if value > best:
                        best, pair = value, (a, b)
            if best < similarity and len(groups) <= most:
                break
            a, b = pair
            groups[a] = sorted(groups[a] + groups[b])
            del groups[b]
    elif len(sentences) > 1:
        groups = [list(range(len(sentences)))]
    made = [
        Cluster([sentences[i] for i in sorted(g, key=lambda i: (-sentences[i].relevance, i))])
        for g in groups
    ]
    made.sort(key=lambda c: (-len(c.papers), -c.members[0].relevance))
    df = Counter(p for text in background for p in set(_phrases(text)))
    topic_words = {w.lower() for w in _PHRASE_WORD.findall(topic)}
    # Groups the names cannot tell apart are one subtopic to the reader: merged, then numbered.
    named: dict[str, Cluster] = {}
    for group in made:
        name = _name(group, df, max(len(background), 1), topic_words, topic)
        if name in named:
            named[name].members.extend(group.members)
        else:
            named[name] = group
    for n, (name, group) in enumerate(named.items(), start=1):
        group.question = SubQuestion(f"Q{n}", name, topic)
    return list(named.values())


def _phrases(text: str) -> list[str]:
    """Candidate names in a text: 1–3-word runs of words of ≥ 3 letters, a stopword allowed only
    inside ("quality of life"), no number, no negation, neither opened nor closed by a verb, a
    participle or an adverb, not followed by "of" (lower case)."""
    words = [w.lower() for w in _PHRASE_WORD.findall(statement_of(text))]
    out = []
    for size in (1, 2, 3):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            if run[0] in lexicon.STOPWORDS or run[-1] in lexicon.STOPWORDS:
                continue
            if (
                any(w in lexicon.STOPWORDS and w not in _INNER for w in run[1:-1])
                or len(set(run)) < size
                or any(
                    w in _VERBS or w in _DESIGN or (len(w) > 4 and w.endswith("ly")) for w in run
                )
            ):
                continue  # "force to skin", "kinase links mechanical", "ihepscs ihepscs": a clause, not a name
            if any(
                w in lexicon.NEGATIONS
                or (w not in lexicon.STOPWORDS and (len(w) < 3 or not w[0].isalpha()))
                for w in run
            ):
                continue
            if (
                _relational(run[0], first=True)
                or _relational(run[-1], first=False)
                or (size > 1 and run[0].endswith("ed") and run[1] in lexicon.STOPWORDS)
            ):  # "contained in neutrophils"
                continue  # "stimulate inflammatory responses", "source of citrullinated": not a subject's name
            if size == 1 and len(run[0]) < 4:
                continue
            if i + size < len(words) and words[i + size] == "of":
                continue  # the head of "source of citrullinated autoantigens", "quality of life": cut short
            out.append(" ".join(run))
    return out


# How a study was run is not what it found: "randomized controlled trial" names no subtopic.
_DESIGN = frozenset(
    [
        "trial",
        "trials",
        "randomized",
        "randomised",
        "controlled",
        "placebo-controlled",
        "double-blind",
        "meta-analysis",
        "meta-analyses",
        "systematic",
        "review",
        "reviews",
        "cohort",
        "prospective",
        "retrospective",
        "cross-sectional",
        "case-control",
        "multicenter",
        "multicentre",
        "updated",
        "pilot",
    ]
)
_INNER = frozenset(
    {"of", "and"}
)  # the only function words inside a name: "quality of life", "nausea and vomiting"
_VERBS = word_list("verbs.relational")


def _relational(word: str, *, first: bool) -> bool:
    """A word that cannot open or close a subject's name: a verb or an adverb, and at the end a
    participle ("citrullinated autoantigens" is a name, "source of citrullinated" is not)."""
    return word in _VERBS or (
        len(word) > 4 and (word.endswith("ly") or (not first and word.endswith("ed")))
    )


def _name(group: Cluster, df: Counter[str], total: int, topic_words: set[str], topic: str) -> str:
    """The question a cluster answers: its two most distinctive phrases — shared by its members
    (sentence or paper title), rare in the rest of the on-topic literature, not the topic's own words,
    and made of words specific in the literature at large (`Vocabulary.specificity`: "netosis" names
    a subtopic, "source" or "results" does not)."""
    words_at_large = vocabulary()
    size = len(group.members)
    inside: Counter[str] = Counter()
    in_title: set[str] = set()
    for s in group.members:
        title = set(_phrases(s.paper.title or ""))
        inside.update(set(_phrases(s.text)) | title)
        in_title |= title

    def score(phrase: str) -> float:
        words = phrase.split()
        rarity = 1.0 - min(df[phrase] / total, 1.0)
        novel = sum(w not in topic_words for w in words) / len(words)
        specific = sum(
            words_at_large.specificity(w) for w in words if w not in lexicon.STOPWORDS
        ) / max(sum(w not in lexicon.STOPWORDS for w in words), 1)
        return (
            (inside[phrase] / size)
            * rarity
            * novel
            * specific
            * (1.0 + 0.3 * (len(words) - 1))
            * (1.5 if phrase in in_title else 1.0)
        )

    ranked = sorted((p for p in inside if score(p) > 0), key=lambda p: (-score(p), p))
    chosen: list[str] = []
    for phrase in ranked:
        if any(set(phrase.split()) & set(c.split()) for c in chosen):
            continue
        chosen.append(phrase)
        if len(chosen) == 2:
            break
    if not chosen:
        return asking(topic)
    texts = [t for s in group.members for t in (s.text, s.paper.title or "")]
    return question_on([_as_written(p, texts) for p in chosen])


def question_on(names: list[str]) -> str:
    """The sub-question on `names`; "X, and on Y" when a name holds an "and" of its own."""
    joined = ", and on ".join(names) if any(" and " in n for n in names) else " and ".join(names)
    return asking(joined)


def _as_written(phrase: str, texts: list[str]) -> str:
    """`phrase` (lower case) with the acronyms its members write ("NETs", "IL-17A") in their case."""
    for text in texts:
        found = re.search(
            r"(?<![\w-])" + r"\s+".join(map(re.escape, phrase.split())) + r"(?![\w-])",
            text,
            re.IGNORECASE,
        )
        if found:
            return " ".join(
                w if sum(c.isupper() for c in w) >= 2 else w.lower() for w in found.group(0).split()
            )
    return phrase


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
        decision = _decide(judge, probs)
        if not decision.rationale_indices:
            continue
        best = max(decision.rationale_indices, key=lambda i: float(1.0 - probs[i, 2]))
        side = sentences[best]
        if _decide(judge, probs[best : best + 1]).label != decision.label:
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
    return _decide(judge, judge.stance(statement_of(statement), [sentence], [title])).label


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
                _decide(judge, judge.stance(topic, sentences, [title] * len(sentences)))
                if sentences
                else None
            )
        off.append(not cut.admits(float(p), decision, names_rarest=named))
    return off
