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

The steps live by role: `topic` (steps 1 and 2, and the off-topic check), `subtopics` (step 3),
`corroboration` (steps 4 and 5). This package names them all.
"""

from research_reviewer.judged.corroboration import (
    RESTATES,
    findings,
    fold_corroborations,
    stance_label,
    tag,
)
from research_reviewer.judged.subtopics import Cluster, Embedder, clusters, phrases, question_on
from research_reviewer.judged.topic import (
    OnTopic,
    TopicCut,
    abstract_evidence,
    decide,
    evidence_sentences,
    names_rarest_word,
    off_topic,
    on_topic,
    passage,
    spans,
)

__all__ = [
    "RESTATES",
    "Cluster",
    "Embedder",
    "OnTopic",
    "TopicCut",
    "abstract_evidence",
    "clusters",
    "decide",
    "evidence_sentences",
    "findings",
    "fold_corroborations",
    "names_rarest_word",
    "off_topic",
    "on_topic",
    "passage",
    "phrases",
    "question_on",
    "spans",
    "stance_label",
    "tag",
]
