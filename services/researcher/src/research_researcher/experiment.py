"""The researcher's work: turn a question and its evidence into a drafted claim (no DB, no broker).

Evidence comes from two places: the connector's fresh hits and the ledger's memory (sources
already cited by related active claims). Sources already cited are preferred: a known source
the connector also returned goes first, the connector's other hits follow in its order, and
known sources it did not return come last as extra context. The order is made explicit in
each document's `score` (1, 1/2, 1/3, …), which the offline engine reads as its rank prior.
"""

from __future__ import annotations

from collections.abc import Mapping

from research_contracts import SourceHit, Support
from research_corpus.sentences import split_sentences
from research_llm import DraftOutcome, EvidenceDoc, ProviderChain, usage
from research_verification.evidence import Judgement, default_judge, on_topic, thresholds
from research_verification.stance import question_as_statement


def merge_hits(fresh: list[SourceHit], known: list[SourceHit]) -> list[SourceHit]:
    """One list of hits without duplicate ids, sources already cited first (see module doc)."""
    known_ids = {hit.source_id for hit in known}
    seen: set[str] = set()
    ordered: list[SourceHit] = []
    returned_and_known = [h for h in fresh if h.source_id in known_ids]
    others = [h for h in fresh if h.source_id not in known_ids]
    for hit in [*returned_and_known, *others, *known]:
        if hit.source_id in seen:
            continue
        seen.add(hit.source_id)
        ordered.append(hit)
    return ordered


def evidence_docs(hits: list[SourceHit]) -> list[EvidenceDoc]:
    """The evidence the model sees: title + text of each hit with text, ranked by position."""
    docs: list[EvidenceDoc] = []
    seen: set[str] = set()
    for hit in hits:
        text = hit.abstract or str(hit.metadata.get("passage") or "")
        if not text.strip() or hit.source_id in seen:
            continue
        seen.add(hit.source_id)
        docs.append(
            EvidenceDoc(
                source_id=hit.source_id,
                title=hit.title,
                text=text,
                year=hit.year,
                score=round(1.0 / (1 + len(docs)), 6),
                metadata=hit.metadata,
            )
        )
    return docs


def relevant_docs(
    question: str, docs: list[EvidenceDoc], judge: Judgement | None = None
) -> tuple[list[EvidenceDoc], int]:
    """The evidence the relevance model puts on the question (`research_verification.on_topic`,
    the shipped `on_topic` cut-off), in their order, and how many were left out. A claim cites
    only these: a search returns neighbouring subjects too (of the 8 papers hybrid search hands a
    SciFact claim, 6.6 are left out; `bench:researcher --judged`). When no paper is on the
    question, the most relevant one alone is kept, so the engine still states what the nearest
    evidence says and the critic judges it."""
    if not docs:
        return [], 0
    probs = on_topic(question_as_statement(question), [(d.title, d.text) for d in docs], judge)
    cut = thresholds(judge).on_topic
    kept = [d for d, p in zip(docs, probs, strict=True) if p >= cut]
    if not kept:
        kept = [docs[int(probs.argmax())]]
    return kept, len(docs) - len(kept)


def agreeing_supports(
    statement: str, supports: list[Support], judge: Judgement | None = None
) -> tuple[list[Support], int]:
    """The grounded `supports` whose quote supports `statement`, and how many were left out.

    The stance model reads each quote (with its paper's title) against the statement: a quote is a
    support when it is evidence on the statement (1 − P(NEI) ≥ the shipped `evidence` cut-off) and
    reads as agreeing with it (P(SUPPORT) ≥ P(CONTRADICT)). A quote that contains the statement is
    the sentence the claim states and stays whatever the model says; when no quote passes, the
    first stays and the critic judges the claim on it. The demo's screening claim cited, as its
    second support, a methods sentence of another study ("The older people were reassessed by local
    physicians …", P(NEI) 0.84)."""
    if len(supports) < 2:
        return supports, 0
    judge = judge or default_judge()
    statement = " ".join(statement.split())
    probs = judge.stance(
        statement, [s.quote for s in supports], [s.title or None for s in supports]
    )
    cut = thresholds(judge).evidence
    kept = [
        s
        for s, (p_support, p_contradict, p_nei) in zip(supports, probs, strict=True)
        if statement in " ".join(s.quote.split())
        or (1.0 - p_nei >= cut and p_support >= p_contradict)
    ]
    kept = kept or supports[:1]
    return kept, len(supports) - len(kept)


def evidence_sentences(docs: list[EvidenceDoc]) -> list[str]:
    """Every sentence the offline engine will score, as it will split them."""
    return [span.text for doc in docs for span in split_sentences(doc.text)]


def corpus_docs(docs: list[EvidenceDoc]) -> list[EvidenceDoc]:
    """The `docs` the local corpus holds (their sentences may be stored; outside sources' never)."""
    return [doc for doc in docs if doc.source_id.startswith("corpus:")]


def with_sentence_vectors(
    docs: list[EvidenceDoc], vectors: Mapping[str, list[float]]
) -> list[EvidenceDoc]:
    """`docs`, each carrying the known vectors of its own sentences (the engine embeds the rest)."""
    return [
        doc.model_copy(
            update={
                "sentence_vectors": {
                    s.text: vectors[s.text] for s in split_sentences(doc.text) if s.text in vectors
                }
            }
        )
        for doc in docs
    ]


async def draft_claim(
    question: str, entity: str | None, evidence: list[EvidenceDoc], chain: ProviderChain
) -> DraftOutcome:
    """Ask the provider chain (OpenAI → Gemini → offline) to state one claim with citations.

    `question` must already be de-identified (`prepare.guard_question`): it is what a remote
    model may see. The task is one LLM run with the chain's budget (`LLM__RUN_BUDGET_*`): the
    draft and its corrective retry count in it, and a retry past the budget is not sent (the
    offline engine drafts; the outcome's failures say "run budget spent").
    """
    with usage.within(chain.new_run()):
        return await chain.draft_claim(question, entity, evidence)
