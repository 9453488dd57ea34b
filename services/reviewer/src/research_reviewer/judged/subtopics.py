"""Evidence sentences grouped by subtopic (`clusters`, average-linkage on MiniLM cosine), each group
named as a question by the phrases that set it apart from the rest of the on-topic literature."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from research_judgement.coverage import vocabulary
from research_llm.offline import lexicon
from research_reviewer.evidence import Sentence, SubQuestion, asking, statement_of
from research_text import word_list

_PHRASE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9α-ωΑ-Ω+/-]*[A-Za-z0-9+]|[A-Za-z]")


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray | None: ...


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
    df = Counter(p for text in background for p in set(phrases(text)))
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


def phrases(text: str) -> list[str]:
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
_DESIGN = word_list("words.study_design")


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
        title = set(phrases(s.paper.title or ""))
        inside.update(set(phrases(s.text)) | title)
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
