"""The abstract-level evidence model: how an abstract is packed into windows, how windows and
papers aggregate into one label per abstract, how the verifier's offline engine turns them into
labelled passages, and the shipped model on real SciFact abstracts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from research_judgement.abstract import AbstractJudgement, available, collate, windows
from research_verification import PassageStance, judge_abstracts, parse_claim

pytestmark = pytest.mark.unit
SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from research_judgement.scorer import base_model_path

    return AutoTokenizer.from_pretrained(str(base_model_path()))


def test_a_short_abstract_is_one_window_with_every_sentence_marked(tokenizer) -> None:
    (w,) = windows(
        tokenizer,
        "Aspirin lowers fever.",
        "Aspirin and fever",
        ["Aspirin lowered fever.", "It was safe."],
    )
    assert w.sentences == (0, 1)
    assert w.input_ids[0] == tokenizer.cls_token_id and w.input_ids[-1] == tokenizer.sep_token_id
    owned = [t for t, s in enumerate(w.sentence_of_token) if s == 0]
    assert tokenizer.decode([w.input_ids[t] for t in owned]) == "aspirin lowered fever."
    assert set(w.token_type_ids[: w.input_ids.index(tokenizer.sep_token_id) + 1]) == {0}, (
        "the claim is segment 0"
    )
    assert w.token_type_ids[-1] == 1, "the paper is segment 1"


def test_a_long_abstract_is_split_into_windows_of_whole_sentences_each_with_the_claim_and_title(
    tokenizer,
) -> None:
    sentences = [
        f"Sentence number {i} reports that the treatment changed outcome {i} in the cohort studied."
        for i in range(60)
    ]
    packed = windows(
        tokenizer, "The treatment changes outcomes.", "A long trial", sentences, max_length=256
    )
    assert len(packed) > 1 and all(len(w.input_ids) <= 256 for w in packed)
    assert [i for w in packed for i in w.sentences] == list(range(60)), (
        "every sentence once, in order"
    )
    claim_ids = tokenizer("The treatment changes outcomes.", add_special_tokens=False)["input_ids"]
    assert all(w.input_ids[1 : 1 + len(claim_ids)] == claim_ids for w in packed)
    _ids, _types, _mask, pool, present = collate(packed)
    assert pool.shape[:2] == present.shape and bool(present.any(1).all())
    assert np.allclose(pool.sum(-1).numpy()[present.numpy()], 1.0), (
        "each sentence is the mean of its tokens"
    )


class FixedAbstractModel:
    """Fixed judgements per title: the rule is what is tested."""

    def __init__(
        self,
        by_title: dict[str, tuple[tuple[float, float, float], list[float]]],
        thresholds: dict[str, float],
    ) -> None:
        self.by_title, self.thresholds = by_title, thresholds

    def judge(self, claim: str, papers):
        return [
            AbstractJudgement(np.array(self.by_title[t][0]), np.array(self.by_title[t][1]))
            for t, _ in papers
        ]


SENTENCES = [
    "We randomised 400 adults.",
    "Aspirin lowered fever within an hour.",
    "Adverse events were rare.",
]
THRESHOLDS = {"evidence": 0.85, "best_evidence": 0.3, "contradict_weight": 0.8}


def test_only_the_most_evidential_paper_may_pass_under_the_evidence_bar() -> None:
    model = FixedAbstractModel(
        {
            "best": ((0.5, 0.1, 0.4), [0.1, 0.9, 0.2]),
            "second": ((0.45, 0.1, 0.45), [0.1, 0.9, 0.2]),
            "off": ((0.05, 0.05, 0.9), [0.1, 0.2, 0.1]),
        },
        THRESHOLDS,
    )
    judged = judge_abstracts(
        "Aspirin lowers fever.",
        [("second", SENTENCES), ("best", SENTENCES), ("off", SENTENCES)],
        model,
        False,
    )
    assert [j.label for j in judged] == ["NEI", "SUPPORT", "NEI"]
    assert judged[1].indices == (1,) and judged[1].evidence[0].sentence == SENTENCES[1], (
        "quoted where the model says so"
    )
    sure = FixedAbstractModel(
        {**model.by_title, "second": ((0.8, 0.1, 0.1), [0.1, 0.9, 0.6])}, THRESHOLDS
    )
    judged = judge_abstracts(
        "Aspirin lowers fever.", [("second", SENTENCES), ("best", SENTENCES)], sure, False
    )
    assert [j.label for j in judged] == ["SUPPORT", "NEI"], (
        "over the bar, the most evidential passes; the other needs the bar"
    )
    assert judged[0].indices == (1, 2), (
        "a second sentence when it too is more likely a rationale than not"
    )


def test_contradiction_is_weighed_by_the_shipped_weight() -> None:
    close = FixedAbstractModel({"p": ((0.42, 0.5, 0.08), [0.1, 0.9, 0.1])}, THRESHOLDS)
    assert judge_abstracts("c", [("p", SENTENCES)], close, False)[0].label == "SUPPORT", (
        "0.5 × 0.8 < 0.42"
    )
    clear = FixedAbstractModel({"p": ((0.2, 0.72, 0.08), [0.1, 0.9, 0.1])}, THRESHOLDS)
    (paper,) = judge_abstracts("c", [("p", SENTENCES)], clear, False)
    assert paper.label == "CONTRADICT" and paper.strength == pytest.approx(0.72)


def test_the_offline_engine_labels_whole_abstracts_with_the_abstract_model() -> None:
    from research_verifier.experiment import OfflineEngine
    from research_verifier.tools import Passage
    from tests.verification.fixed_judge import FixedJudge

    text = " ".join(SENTENCES)
    model = FixedAbstractModel(
        {
            "Aspirin trial": ((0.9, 0.05, 0.05), [0.1, 0.95, 0.2]),
            "Ibuprofen trial": ((0.1, 0.8, 0.1), [0.9, 0.2, 0.1]),
            "Unrelated": ((0.1, 0.1, 0.8), [0.1, 0.1, 0.1]),
        },
        THRESHOLDS,
    )
    engine = OfflineEngine(FixedJudge({}, {}), abstract_model=model)  # type: ignore[arg-type]  # a stand-in with the abstract model's `judge` and `thresholds`
    assert engine.evidence_model == "abstract"
    labelled = engine.judge_statement(
        parse_claim("Aspirin lowers fever in adults")[0],
        0,
        [
            Passage("corpus:1", "Aspirin trial", text),
            Passage("corpus:2", "Ibuprofen trial", text),
            Passage("corpus:3", "Unrelated", text),
        ],
    )
    by_source = {p.source_id: p for p in labelled}
    assert set(by_source) == {"corpus:1", "corpus:2"}
    assert (
        by_source["corpus:1"].label is PassageStance.SUPPORTS
        and by_source["corpus:1"].text == SENTENCES[1]
    )
    assert (
        by_source["corpus:2"].label is PassageStance.CONTRADICTS
        and by_source["corpus:2"].text == SENTENCES[0]
    )


@pytest.mark.skipif(
    not available() or not SCIFACT.exists(),
    reason="needs the shipped abstract model and ../shared/data/scifact",
)
def test_the_shipped_model_finds_the_evidence_sentence_of_held_out_abstracts() -> None:
    """Fold-0 train claims (never trained on) with a single-sentence rationale: the model labels most
    gold abstracts right and puts the rationale sentence first — not a tuned figure, a floor far
    under the measured one (docs/judgement.md), so a broken load or packing fails it."""
    from research_judgement.abstract import get_abstract_judge

    corpus = {r["doc_id"]: r for r in map(json.loads, (SCIFACT / "corpus.jsonl").open())}
    claims = [
        json.loads(line)
        for i, line in enumerate((SCIFACT / "claims_train.jsonl").open())
        if i % 5 == 0
    ]
    cases = [
        (c["claim"], int(d), sets[0]["label"], set(sets[0]["sentences"]))
        for c in claims
        for d, sets in c["evidence"].items()
    ][:30]
    judge = get_abstract_judge()
    right = first = 0
    for claim, doc, label, rationale in cases:
        (j,) = judge.judge(claim, [(corpus[doc]["title"], corpus[doc]["abstract"])])
        right += j.label == label
        first += int(np.argmax(j.rationale)) in rationale
    assert right >= 10 and first >= 10, (right, first)  # measured 13 and 14 of 30


def test_a_verification_that_finds_nothing_says_what_was_searched_and_the_nearest_miss() -> None:
    import uuid

    from research_verifier import reshape
    from research_verifier.experiment import Evidence, OfflineEngine
    from research_verifier.prepare import VerificationJob
    from research_verifier.tools import Passage
    from tests.verification.fixed_judge import FixedJudge

    claim = "Aspirin lowers fever in adults"
    text = " ".join(SENTENCES)
    papers = [
        Passage("corpus:1", "Aspirin and platelets", text, year=2001),
        Passage("corpus:2", "Fever in children", text),
    ]
    model = FixedAbstractModel(
        {
            "Aspirin and platelets": ((0.1, 0.1, 0.8), [0.1, 0.2, 0.1]),
            "Fever in children": ((0.05, 0.05, 0.9), [0.1, 0.1, 0.1]),
        },
        THRESHOLDS,
    )
    engine = OfflineEngine(FixedJudge({}, {}), abstract_model=model)  # type: ignore[arg-type]  # a stand-in with the abstract model's `judge` and `thresholds`
    job = VerificationJob(
        uuid.uuid4(), "run-1", claim, parse_claim(claim), ["corpus"], {}, False, "test"
    )
    evidence = Evidence(passages={p.paper_id: p for p in papers}, searches=4)
    evidence.labelled = engine.judge_statement(job.statements[0], 0, papers)
    assert evidence.best() == [], "the nearest miss is no evidence"
    why = reshape.nothing_found(
        job, evidence.searches, len(evidence.passages), evidence.closest(), engine.bar
    )
    report, assessment, _, _ = reshape.checked(
        job,
        evidence.best(),
        evidence.passages,
        engine="offline",
        searches=4,
        quotes_per_side=6,
        why_nothing=why,
    )
    assert str(assessment.verdict) == "INSUFFICIENT EVIDENCE" and not report.references
    assessment_section = report.section("Confidence Assessment")
    assert assessment_section is not None
    body = assessment_section.body
    assert (
        "4 searches" in body
        and f"“{job.statements[0].queries[0]}”" in body
        and "retrieved 2 papers" in body
    )
    assert (
        "The closest was “Aspirin and platelets”, 2001: P(evidence on the claim) 0.20, under the 0.30"
        in body
    )
    assert report.metadata["nothing_found"].startswith("Nothing found")
