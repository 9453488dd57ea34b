"""The offline engine on real SciFact text: it answers from the right sentences, quotes
exactly, is deterministic, and its critic promotes, supersedes and rejects sensibly."""

from __future__ import annotations

import uuid

import pytest

from research_contracts import Support, Verdict
from research_llm import ClaimForReview, EvidenceDoc, OfflineProvider, build_chain
from research_llm.offline.lexicon import contradicts, split_sentences
from research_platform.settings import LLMSettings
from tests.llm.conftest import as_evidence

pytestmark = pytest.mark.unit

# SciFact train claim 2 ("1 in 5 million in UK have abnormal PrP positivity"): gold doc 13734012.
PRP_QUESTION = "How common is abnormal PrP positivity in the UK?"
PRP_GOLD = 13734012
DISTRACTORS = [4983, 5836, 7912, 18670]


@pytest.fixture(scope="module", params=["lexical", "hybrid"])
def offline(request: pytest.FixtureRequest) -> OfflineProvider:
    if request.param == "lexical":
        return OfflineProvider(encoder=None)
    provider = OfflineProvider()
    if provider.relevance().mode != "hybrid":
        pytest.skip("the corpus embedder is not available")
    return provider


def evidence(scifact: dict, ids: list[int]) -> list[EvidenceDoc]:
    return [as_evidence(scifact["corpus"][i]) for i in ids if i in scifact["corpus"]]


async def test_draft_quotes_the_gold_document_exactly(
    scifact: dict, offline: OfflineProvider
) -> None:
    docs = evidence(scifact, [*DISTRACTORS, PRP_GOLD])
    draft = await offline.draft_claim(PRP_QUESTION, None, docs)

    assert draft.supports[0].source_id == f"corpus:{PRP_GOLD}"
    texts = {d.source_id: d.text for d in docs}
    for support in draft.supports:
        assert support.quote in texts[support.source_id]
    assert "PrP" in draft.statement and draft.statement.endswith(".")
    assert "prp" in draft.entity.lower()
    assert 0.0 < draft.confidence < 1.0


async def test_same_input_same_output(scifact: dict, offline: OfflineProvider) -> None:
    docs = evidence(scifact, [*DISTRACTORS, PRP_GOLD])
    first = await offline.draft_claim(PRP_QUESTION, "prion", docs)
    second = await offline.draft_claim(PRP_QUESTION, "prion", docs)
    assert first == second
    assert first.entity == "prion"


async def test_agreeing_sources_raise_confidence(offline: OfflineProvider) -> None:
    lead = EvidenceDoc(
        source_id="a",
        title="Statins",
        text="Statin therapy lowers LDL cholesterol in adults. Methods varied.",
    )
    agreeing = EvidenceDoc(
        source_id="b",
        title="Trial",
        text="In adults, statin therapy lowered LDL cholesterol by a third.",
    )
    unrelated = EvidenceDoc(
        source_id="c", title="Bees", text="Honey bees forage over several kilometres."
    )
    alone = await offline.draft_claim(
        "Does statin therapy lower LDL cholesterol?", None, [lead, unrelated]
    )
    together = await offline.draft_claim(
        "Does statin therapy lower LDL cholesterol?", None, [lead, agreeing, unrelated]
    )
    assert {s.source_id for s in together.supports} == {"a", "b"}
    assert together.confidence > alone.confidence


async def test_no_evidence_gives_an_unsupported_zero_confidence_draft(
    offline: OfflineProvider,
) -> None:
    draft = await offline.draft_claim("Does X cause Y?", "X", [])
    assert draft.supports == [] and draft.confidence == 0.0


def test_sentence_spans_are_exact_and_respect_abbreviations() -> None:
    text = "Smith et al. reported a rise (p = 0.01). Levels fell, e.g. in mice.  A second finding followed."
    spans = split_sentences(text)
    assert [s.text for s in spans] == [
        "Smith et al. reported a rise (p = 0.01).",
        "Levels fell, e.g. in mice.",
        "A second finding followed.",
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_polarity_cues() -> None:
    assert contradicts("Aspirin reduces stroke risk.", "Aspirin does not reduce stroke risk.")
    assert contradicts("Exercise increases bone density.", "Exercise decreases bone density.")
    assert not contradicts(
        "Exercise increases bone density.", "Exercise raises bone density in women."
    )


def _claim(
    statement: str, quotes: list[tuple[str, str]], confidence: float, entity: str = "statins"
) -> ClaimForReview:
    return ClaimForReview(
        claim_id=uuid.uuid4(),
        entity=entity,
        statement=statement,
        confidence=confidence,
        supports=[Support(source_id=s, quote=q) for s, q in quotes],
    )


STATIN_DOCS = [
    EvidenceDoc(source_id="s1", title="t", text="Statin therapy lowers LDL cholesterol in adults."),
    EvidenceDoc(
        source_id="s2",
        title="t",
        text="Statin therapy lowered LDL cholesterol by a third in adults.",
    ),
    EvidenceDoc(
        source_id="s3",
        title="t",
        text="Statin therapy lowers LDL cholesterol and cardiovascular events in adults.",
    ),
]


async def test_critic_promotes_a_grounded_new_claim(offline: OfflineProvider) -> None:
    candidate = _claim(
        "Statin therapy lowers LDL cholesterol in adults.", [("s1", STATIN_DOCS[0].text)], 0.7
    )
    verdict = await offline.judge_claim(candidate, [], STATIN_DOCS)
    assert verdict.verdict == Verdict.promote and verdict.model == "offline-critic-v1"
    assert verdict.score > 0.5


async def test_critic_supersedes_a_weaker_claim_on_the_same_point(offline: OfflineProvider) -> None:
    old = _claim(
        "Statin therapy lowers LDL cholesterol in adults.", [("s1", STATIN_DOCS[0].text)], 0.5
    )
    candidate = _claim(
        "Statin therapy lowers LDL cholesterol in adults.",
        [(d.source_id, d.text) for d in STATIN_DOCS],
        0.85,
    )
    unrelated = _claim(
        "Statins are cheap in generic form.", [("s9", "Statins are cheap in generic form.")], 0.9
    )
    verdict = await offline.judge_claim(candidate, [old, unrelated], STATIN_DOCS)
    assert verdict.verdict == Verdict.supersede
    assert verdict.supersedes == [old.claim_id]


async def test_critic_rejects_ungrounded_weak_and_contradicted_claims(
    offline: OfflineProvider,
) -> None:
    invented = _claim(
        "Statin therapy cures diabetes.", [("s1", "Statin therapy cures diabetes.")], 0.9
    )
    assert (await offline.judge_claim(invented, [], STATIN_DOCS)).verdict == Verdict.reject

    unsupported = _claim("Statin therapy lowers LDL cholesterol.", [], 0.9)
    assert (await offline.judge_claim(unsupported, [], None)).verdict == Verdict.reject

    off_topic = _claim(
        "Statins prevent hair loss in elderly men.", [("s1", STATIN_DOCS[0].text)], 0.9
    )
    assert (await offline.judge_claim(off_topic, [], STATIN_DOCS)).verdict == Verdict.reject

    strong = _claim(
        "Statin therapy lowers LDL cholesterol in adults.",
        [(d.source_id, d.text) for d in STATIN_DOCS],
        0.9,
    )
    contrary = _claim(
        "Statin therapy does not lower LDL cholesterol in adults.",
        [("x", "Statin therapy does not lower LDL cholesterol in adults.")],
        0.4,
    )
    verdict = await offline.judge_claim(contrary, [strong], None)
    assert verdict.verdict == Verdict.reject and "contradicts" in verdict.reasoning


async def test_default_chain_is_offline_and_labelled(scifact: dict) -> None:
    chain = build_chain(LLMSettings(), encoder=None)
    outcome = await chain.draft_claim(PRP_QUESTION, None, evidence(scifact, [PRP_GOLD]))
    assert (outcome.provider, outcome.model, outcome.failures) == (
        "offline",
        "offline-extractive-v1",
        [],
    )


@pytest.mark.unit
def test_the_statement_reports_a_finding_not_the_study_aim() -> None:
    """An abstract's OBJECTIVE line restates the question; the claim must state what was found."""
    from research_llm.offline.drafting import ExtractiveDrafter, role_weight
    from research_llm.offline.relevance import Relevance

    text = (
        "OBJECTIVE To test the effects of exercise training on health status among patients with heart failure. "
        "METHODS Patients were randomized to usual care or aerobic exercise training. "
        "CONCLUSIONS Exercise training conferred modest but statistically significant improvements in "
        "self-reported health status compared with usual care."
    )
    draft = ExtractiveDrafter(Relevance(None)).draft(
        "Does exercise training improve health status in heart failure?",
        None,
        [EvidenceDoc(source_id="corpus:1", title="Exercise training in heart failure", text=text)],
    )
    assert draft.statement.startswith("Exercise training conferred")
    assert draft.supports[0].quote in text
    assert (
        role_weight("OBJECTIVE To test the effects.")
        < 1.0
        < role_weight("RESULTS Mortality was reduced significantly.")
    )
