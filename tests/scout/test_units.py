"""Scout's pure parts: clamping of every run-time parameter to the admin limits, routing per
source type, keywords from the prompt, each detail level's fields, facts traceable to a source
sentence (and the citation checker dropping one that is not), the refinement loop's three stop
rules, confidence clamping, de-duplication and the snapshot diff."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import ClassVar

import numpy as np
import pytest

from research_contracts import EvidenceFound, SearchEvidence
from research_contracts.sourcelists import (
    DetailLevel,
    FactConfidence,
    RequestSourceList,
    SourceList,
    SourceType,
)
from research_ledger.source_limits import ACADEMIC_APIS, WorkspaceLimits, clamp, schedule_refusal
from research_scout import detail, experiment, prepare, reshape
from research_scout.detail import FactRecord
from research_scout.pipeline import build
from research_scout.settings import ScoutSettings
from tests.scout.hits import VITAMIN_D, paper
from tests.verification.fixed_judge import FixedJudge

pytestmark = pytest.mark.unit
PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"
KCCQ = "Exercise training improved the KCCQ score by 5.2 points (95% CI 4.1-6.3) at 3 months."
MODEST = "Exercise training may confer modest improvements in health status."
INCONSISTENT = (
    "Findings from previous studies of exercise training on health status have been inconsistent."
)
TREND = "There was a trend toward greater improvement in daily activities with training (P = 0.10)."


class ScoutJudge(FixedJudge):
    """What the judgement models say about the test hits (the rules are tested, not the weights):
    the meta-analysis and the cohort are squarely on the prompt, the falls study and the dosing
    papers partly, the adolescents' calcium study not; the result sentences are evidence."""

    def relevance(self, question, passages):
        values = super().relevance(question, passages)
        for i, passage in enumerate(passages):
            if passage[0].startswith("Vitamin D dosing"):
                values[i] = 0.6
        return values


JUDGE = ScoutJudge(
    {
        "Vitamin D supplementation of 800 IU daily reduced hip fracture risk by 30% (HR 0.70).": (
            0.85,
            0.05,
            0.1,
        ),
        "Lower doses may not prevent fractures.": (0.35, 0.25, 0.4),
        "In a cohort of 2,300 residents, supplementation with vitamin D lowered fracture incidence.": (
            0.8,
            0.05,
            0.15,
        ),
        KCCQ: (0.85, 0.05, 0.1),
        MODEST: (0.5, 0.1, 0.4),
        INCONSISTENT: (0.3, 0.4, 0.3),
        TREND: (0.9, 0.05, 0.05),
    },
    {
        VITAMIN_D[0].title: 0.9,
        VITAMIN_D[1].title: 0.8,
        VITAMIN_D[2].title: 0.1,
        VITAMIN_D[3].title: 0.6,
        "Vitamin D supplementation and fracture risk in older adults revisited": 0.9,
    },
)


@pytest.fixture(autouse=True)
def judgement(monkeypatch):
    """Every judgement of these tests comes from `JUDGE`."""
    import research_verification.evidence

    monkeypatch.setattr(research_verification.evidence, "default_judge", lambda: JUDGE)
    monkeypatch.setattr(detail, "default_judge", lambda: JUDGE)
    return JUDGE


def request(**values) -> RequestSourceList:
    return RequestSourceList(prompt=PROMPT, **values)


# --- clamping ---------------------------------------------------------------------------------
def test_every_parameter_is_clamped_to_the_workspace_limits():
    limits = WorkspaceLimits(
        max_references=12,
        allowed_source_types=["news", "general"],
        detail_level_ceiling="citation_extract",
        default_language="de",
    )
    held = clamp(
        request(num_references=40, source_type="academic", detail_level="facts_list"), limits
    )
    assert held.num_references == 12
    assert (
        held.source_type is SourceType.general
    )  # academic is not allowed: the first allowed type, in seed order
    assert held.detail_level is DetailLevel.citation_extract
    assert held.language == "de"
    assert clamp(held, limits) == held  # idempotent
    within = clamp(
        request(
            num_references=5, source_type="news", detail_level="citation_summary", language="fr"
        ),
        limits,
    )
    assert (within.num_references, within.source_type, within.detail_level, within.language) == (
        5,
        SourceType.news,
        DetailLevel.citation_summary,
        "fr",
    )


def test_schedule_limits_are_refused_naming_the_limit():
    limits = WorkspaceLimits(max_scheduled_lists=2, min_update_interval_s=86400)
    assert "min_update_interval_s=86400" in schedule_refusal("PT12H", 0, limits)
    assert "max_scheduled_lists=2" in schedule_refusal("P1D", 2, limits)
    assert schedule_refusal("P1D", 1, limits) is None
    assert schedule_refusal(None, 99, limits) is None


def test_allowed_apis_restrict_the_route():
    assert prepare.route(SourceType.academic, [*list(ACADEMIC_APIS), "tavily"]) == list(
        ACADEMIC_APIS
    )
    assert prepare.route(SourceType.academic, ["crossref", "corpus", "tavily"]) == [
        "crossref",
        "corpus",
    ]
    assert prepare.route(SourceType.general, ["tavily"]) == ["tavily"]
    assert prepare.route(SourceType.news, ["tavily", "pubmed"]) == ["tavily_news"]
    assert prepare.route(SourceType.news, ["pubmed"]) == []


def test_keywords_come_from_the_prompt_without_identifiers():
    assert prepare.extract_keywords(PROMPT) == [
        "vitamin D",
        "supplementation",
        "fracture",
        "risk",
        "older",
        "adults",
    ]
    words = prepare.extract_keywords("Fracture risk of Jane Roe, MRN 12345678, on vitamin D")
    assert "jane" not in words and "roe" not in words and "12345678" not in " ".join(words)
    brief = prepare.brief(request(keywords=["hip fracture"]), WorkspaceLimits())
    assert brief.keywords == ["hip fracture"] and brief.query == "hip fracture"


def test_date_range_becomes_connector_filters():
    brief = prepare.brief(
        request(date_from=date(2018, 3, 1), date_to=date(2021, 6, 30)), WorkspaceLimits()
    )
    assert (brief.filters.year_from, brief.filters.year_to) == (2018, 2021)
    early = prepare.candidate(paper(9, "x", "y").model_copy(update={"date": date(2018, 1, 5)}))
    assert not prepare.within_dates(early, date(2018, 3, 1), date(2021, 6, 30))


# --- judging, refinement, stop rules --------------------------------------------------------
def _scripted(
    pages: list[list],
) -> tuple[list[str], Callable[[SearchEvidence], Awaitable[EvidenceFound]]]:
    asked: list[str] = []

    async def search(ask: SearchEvidence) -> EvidenceFound:
        asked.append(ask.query)
        return EvidenceFound(hits=pages[min(len(asked) - 1, len(pages) - 1)])

    return asked, search


def _build(pages, settings: ScoutSettings | None = None, **values):
    """A run over scripted pages; the chain judge unless `settings` say otherwise (its rules are what these tests pin)."""
    asked, search = _scripted(pages)
    brief = prepare.brief(request(**values), WorkspaceLimits())
    snapshot, loop, stop = asyncio.run(
        build(
            brief,
            settings or ScoutSettings(max_iterations=3, judge="chain"),
            search,
            run_id="sl-test",
        )
    )
    return asked, snapshot, loop, stop


def test_judgements_are_labelled_from_the_relevance_model_with_clamped_confidence_and_a_rationale():
    keywords = prepare.extract_keywords(PROMPT)
    labels = {h.title: experiment.judge(prepare.candidate(h), keywords, PROMPT) for h in VITAMIN_D}
    assert [labels[h.title].label for h in VITAMIN_D] == [
        "strong",
        "strong",
        "irrelevant",
        "partial",
    ]
    assert labels[VITAMIN_D[3].title].relevance == pytest.approx(0.6)
    assert (
        "relevance",
        PROMPT,
        [(VITAMIN_D[0].title, VITAMIN_D[0].abstract)],
    ) in JUDGE.calls  # the prompt, title + abstract
    for verdict in labels.values():
        assert 0.0 <= verdict.confidence <= 1.0 and 0.0 <= verdict.relevance <= 1.0
        assert (
            "\n" not in verdict.rationale
            and "keywords" in verdict.rationale
            and "relevance model" in verdict.rationale
        )
        assert verdict.model == experiment.MODEL
    assert (
        experiment.clamp01(1.7) == 1.0
        and experiment.clamp01(-3) == 0.0
        and experiment.clamp01(float("nan")) == 0.0
    )


def test_a_source_that_never_names_what_the_question_asks_about_is_irrelevant():
    # on the outcome (fracture risk in older adults), rated on the prompt, but a study of another intervention
    exercise = paper(
        40,
        "Exercise programmes and fracture risk in older adults",
        "Supervised balance training reduced fracture risk by 20% in adults over 70.",
    )
    judge = FixedJudge(JUDGE.stances, {**JUDGE.relevances, exercise.title: 0.8})
    keywords = prepare.extract_keywords(PROMPT)
    verdict = experiment.judge(prepare.candidate(exercise), keywords, PROMPT, judge)
    assert verdict.label == "irrelevant" and verdict.relevance == pytest.approx(0.8)
    assert "never names vitamin D supplementation" in verdict.rationale
    named = experiment.judge(prepare.candidate(VITAMIN_D[0]), keywords, PROMPT, judge)
    assert named.label == "strong"
    # a topic without a verb has no subject apart from its outcome: the relevance model alone decides
    topic = experiment.judge(
        prepare.candidate(exercise), keywords, "vitamin D fracture risk older adults", judge
    )
    assert topic.label == "strong"


def test_a_source_under_the_cut_is_partial_when_it_squarely_states_a_finding_on_the_question():
    sure = "Vitamin D supplementation lowered the incidence of hip fracture by a quarter (RR 0.75)."
    unsure = "Vitamin D supplementation was recorded at baseline in all participants."
    found = paper(
        41, "A registry of older adults", f"Older adults were followed for 5 years. {sure}"
    )
    vague = paper(
        42, "Another registry of older adults", f"Older adults were followed for 5 years. {unsure}"
    )
    judge = FixedJudge(
        {sure: (0.8, 0.05, 0.15), unsure: (0.4, 0.1, 0.5)}, {found.title: 0.3, vague.title: 0.3}
    )
    keywords = prepare.extract_keywords(PROMPT)
    verdict = experiment.judge(prepare.candidate(found), keywords, PROMPT, judge)
    assert verdict.label == "partial" and "states a finding on it (P 0.80)" in verdict.rationale
    assert experiment.judge(prepare.candidate(vague), keywords, PROMPT, judge).label == "irrelevant"
    far = FixedJudge(judge.stances, {found.title: 0.05})
    assert (
        experiment.judge(prepare.candidate(found), keywords, PROMPT, far).label == "irrelevant"
    ), "below the floor"


def test_loop_stops_on_enough_strong_hits():
    asked, _snapshot, loop, stop = _build([VITAMIN_D], num_references=1)
    assert stop == "enough_strong" and len(asked) == 1
    assert loop.iterations[0]["counts"]["strong"] >= 1


def test_loop_stops_at_the_iteration_cap():
    # each page brings one new partial hit whose title adds new shared terms, so queries keep changing
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    pages = [
        [
            paper(
                20 + 2 * i + k,
                f"Vitamin D dosing {w} {design}",
                f"Vitamin D dosing {w} {design} results.",
            )
            for k, design in enumerate(("trial", "cohort"))
        ]
        for i, w in enumerate(words)
    ]
    asked, _, _loop, stop = _build(pages, num_references=10)
    assert stop == "iteration_cap" and len(asked) == 3 and len(set(asked)) == 3


def test_loop_stops_on_a_repeated_query():
    # an irrelevant hit only: the feedback broadens to the first anchor, then has nothing new to say
    asked, _, loop, stop = _build([[VITAMIN_D[2]]], num_references=10)
    assert stop == "repeated_query"
    assert asked == ["vitamin D supplementation fracture risk older adults", "vitamin D"]
    assert loop.iterations[0]["memo"].startswith("0 partial and 1 irrelevant")


def test_an_empty_query_stops_the_loop():
    assert (
        experiment.stop_reason(strong=0, wanted=5, iteration=1, cap=3, next_query="  ", tried=["a"])
        == "empty_query"
    )
    assert (
        experiment.stop_reason(
            strong=0, wanted=5, iteration=1, cap=3, next_query="B a", tried=["a b"]
        )
        == "repeated_query"
    )
    assert (
        experiment.stop_reason(
            strong=0, wanted=5, iteration=1, cap=3, next_query="a c", tried=["a b"]
        )
        is None
    )


def test_refined_query_drops_keywords_no_hit_has_and_adds_shared_terms():
    keywords = ["vitamin D", "fracture", "zebrafish"]
    judged = [
        (prepare.candidate(h), experiment.Judgement("partial", 0.6, "", 0.5)) for h in VITAMIN_D[:2]
    ]
    refined = experiment.refine("vitamin D fracture zebrafish", keywords, judged)
    assert "zebrafish" not in refined and refined.startswith("vitamin D fracture")
    assert "supplementation" in refined  # in both partial hits' titles


# --- detail levels ----------------------------------------------------------------------------
@pytest.mark.parametrize("level", list(DetailLevel))
def test_each_detail_level_has_its_fields(level):
    _, snapshot, _, _ = _build([VITAMIN_D], num_references=3, detail_level=level.value)
    sources = snapshot.source_list.sources
    assert sources and all(s.summary for s in sources)
    if level is DetailLevel.citation_summary:
        assert all(s.extract is None and s.facts is None for s in sources)
    else:
        assert all(s.extract for s in sources)
        first = sources[0]
        assert "Key findings:" in first.extract and "Methodology:" in first.extract
    if level is DetailLevel.facts_list:
        assert all(s.facts for s in sources)
        for source in sources:
            provenance = snapshot.provenance[str(source.source_id)]
            text = next(h.abstract for h in VITAMIN_D if h.title == source.title)
            for fact, located in zip(source.facts, provenance["facts"], strict=True):
                assert fact.statement in text  # verbatim
                assert located["locator"].startswith("abstract sentence ")
        facts = {s.title: [(f.statement, f.confidence) for f in s.facts] for s in sources}
        # its finding; not its design sentence, nor the hedge the model rates far below the finding (0.6 vs 0.9)
        assert facts[VITAMIN_D[0].title] == [
            (
                "Vitamin D supplementation of 800 IU daily reduced hip fracture risk by 30% (HR 0.70).",
                FactConfidence.high,
            )
        ]
        # the falls study states no finding about the prompt: what it says is given, tagged inferred
        assert {c for _, c in facts[VITAMIN_D[3].title]} == {FactConfidence.inferred}
    else:
        assert all(s.facts is None for s in sources)


def test_the_citation_checker_drops_a_fact_not_in_the_source():
    brief = prepare.brief(request(detail_level="facts_list"), WorkspaceLimits())
    item = prepare.candidate(VITAMIN_D[0])
    verdict = experiment.judge(item, brief.keywords, PROMPT)
    found = detail.detail(
        item, DetailLevel.facts_list, brief.keywords, academic=True, prompt=PROMPT
    )
    invented = FactRecord(
        "Vitamin D cured 95% of all fractures in 2 weeks.",
        FactConfidence.high,
        "Vitamin D cured 95% of all fractures in 2 weeks.",
        "abstract sentence 9",
    )
    found.facts = [*found.facts, invented]
    snapshot = reshape.conform(
        brief,
        [reshape.Judged(item, verdict, found)],
        preferred={},
        generated_at=datetime.now(UTC),
        next_run_at=None,
        run_id="sl-x",
    )
    statements = [f.statement for f in snapshot.source_list.sources[0].facts]
    assert invented.statement not in statements and len(statements) == len(found.facts) - 1
    assert snapshot.dropped_facts == 1


# --- the abstract-level judge -----------------------------------------------------------------
class FixedAbstractModel:
    """What the abstract model says of each paper (by title): (P(SUPPORT, CONTRADICT, NEI), P(rationale) per sentence)."""

    thresholds: ClassVar[dict[str, float]] = {
        "evidence": 0.85,
        "best_evidence": 0.3,
        "contradict_weight": 0.8,
    }

    def __init__(self, by_title) -> None:
        self.by_title = by_title
        self.calls: list[list[str]] = []

    def judge(self, claim, papers):
        from research_judgement.abstract import AbstractJudgement

        self.calls.append([t for t, _ in papers])
        out = []
        for title, sentences in papers:
            probs, rationale = self.by_title.get(
                title, ((0.01, 0.01, 0.98), [0.1] * len(sentences))
            )
            out.append(AbstractJudgement(np.array(probs), np.array(rationale[: len(sentences)])))
        return out


ABSTRACT = FixedAbstractModel(
    {
        VITAMIN_D[0].title: (
            (0.9, 0.02, 0.08),
            [0.1, 0.95, 0.3],
        ),  # evidence: its hip-fracture result
        VITAMIN_D[1].title: (
            (0.55, 0.05, 0.4),
            [0.9, 0.6],
        ),  # some evidence, under the bar (not the batch's best)
        VITAMIN_D[2].title: (
            (0.02, 0.01, 0.97),
            [0.1, 0.1],
        ),  # adolescents' calcium: nothing on the prompt
        VITAMIN_D[3].title: ((0.1, 0.05, 0.85), [0.2, 0.4]),  # falls: a little
    }
)


@pytest.fixture
def abstract_model(monkeypatch):
    import research_judgement.abstract

    monkeypatch.setattr(research_judgement.abstract, "get_abstract_judge", lambda: ABSTRACT)
    return ABSTRACT


def test_the_abstract_model_labels_a_batch_of_hits_by_their_evidence_on_the_prompt(abstract_model):
    keywords = prepare.extract_keywords(PROMPT)
    verdicts = experiment.judge_batch(
        [prepare.candidate(h) for h in VITAMIN_D], keywords, PROMPT, partial=0.1
    )
    assert len(abstract_model.calls) == 1, "one call for the batch"
    assert [v.label for v in verdicts] == ["strong", "partial", "irrelevant", "partial"]
    assert [v.relevance for v in verdicts] == pytest.approx([0.92, 0.6, 0.03, 0.15])
    assert verdicts[0].facts == (1,) and verdicts[0].sure, (
        "the sentence it rests on, over the bar every paper must clear"
    )
    assert verdicts[1].facts == () and not verdicts[1].sure
    assert (
        "P(evidence on the prompt) 0.92 (abstract model)" in verdicts[0].rationale
        and "supports it" in verdicts[0].rationale
    )
    strict = experiment.judge_batch(
        [prepare.candidate(h) for h in VITAMIN_D], keywords, PROMPT, partial=0.5
    )
    assert [v.label for v in strict] == ["strong", "partial", "irrelevant", "irrelevant"]
    alone = experiment.judge_batch([prepare.candidate(VITAMIN_D[1])], keywords, PROMPT)
    assert alone[0].label == "strong" and not alone[0].sure, (
        "the most evidential hit of a batch needs less (the verifier's rule)"
    )


def test_a_strong_source_states_the_sentences_the_abstract_model_rests_on(abstract_model):
    _, snapshot, _loop, _ = _build(
        [VITAMIN_D],
        ScoutSettings(max_iterations=1, partial_evidence=0.1),
        num_references=3,
        detail_level="facts_list",
    )
    sources = snapshot.source_list.sources
    assert [s.title for s in sources] == [
        VITAMIN_D[0].title,
        VITAMIN_D[1].title,
        VITAMIN_D[3].title,
    ], "strong, then partial"
    first = snapshot.provenance[str(sources[0].source_id)]
    assert first["facts"] == [
        {
            "statement": "Vitamin D supplementation of 800 IU daily reduced hip fracture risk by 30% (HR 0.70).",
            "confidence": "high",
            "quote": "Vitamin D supplementation of 800 IU daily reduced hip fracture "
            "risk by 30% (HR 0.70).",
            "locator": "abstract sentence 2",
        }
    ]
    assert "abstract model" in first["rationale"] and sources[0].relevance_score == pytest.approx(
        0.92
    )
    # a partial source, no evidence by the abstract model: its facts come from the sentence-level rule (inferred here)
    assert {f.confidence for f in sources[2].facts} == {FactConfidence.inferred}


def test_an_empty_list_says_what_was_searched_what_was_read_and_why_the_best_fell_short(
    abstract_model,
):
    off = [VITAMIN_D[2]]  # nothing on the prompt
    asked, snapshot, _loop, _ = _build(
        [off], ScoutSettings(max_iterations=2, partial_evidence=0.1), detail_level="facts_list"
    )
    assert snapshot.source_list.sources == []
    note = snapshot.source_list.note
    assert note.startswith(
        "No source was judged on the prompt. Searched semantic_scholar, crossref, openalex, pubmed, "
        "europepmc, arxiv, corpus with "
    )
    assert f"with {len(asked)} quer" in note and all(repr(q) in note for q in asked)
    assert "read 1 paper." in note
    assert (
        f"The best candidate, {VITAMIN_D[2].title!r} (pmid:9003), was irrelevant: P(evidence on the prompt) 0.03"
        in note
    )
    assert (
        snapshot.report.metadata["empty_reason"] == note
        and snapshot.report.section("Sources").body == note
    )
    assert SourceList.model_validate(snapshot.content()["source_list"]).note == note, (
        "stored with the snapshot"
    )
    listed = _build([VITAMIN_D], ScoutSettings(max_iterations=1))[1]
    assert listed.source_list.note is None, "a list with sources needs no note"


# --- merging and diffs ------------------------------------------------------------------------
def test_duplicates_merge_by_doi_pmid_and_title() -> None:
    pool: dict = {}
    same_doi = VITAMIN_D[0].model_copy(
        update={"source_id": "s2:abc", "source": "semantic_scholar", "abstract": ""}
    )
    same_title = paper(50, VITAMIN_D[1].title.upper(), "", source="crossref")
    fresh = prepare.merge(
        [prepare.candidate(h) for h in [VITAMIN_D[0], same_doi, VITAMIN_D[1], same_title]], pool
    )
    assert len(fresh) == 2 and len(pool) == 2
    assert pool["doi:10.1000/vitd.1"].seen_in == ["pubmed", "semantic_scholar"]


def test_diff_lists_new_changed_and_dropped_sources():
    _, first, _, _ = _build([[*VITAMIN_D[:2], VITAMIN_D[3]]], num_references=5)
    retracted = VITAMIN_D[1].model_copy(update={"metadata": {"retracted": True}})
    _, second, _, _ = _build(
        [
            [
                VITAMIN_D[0],
                retracted,
                paper(
                    7,
                    "Vitamin D supplementation and fracture risk in older adults revisited",
                    "Vitamin D supplementation reduced fracture risk in older adults.",
                ),
            ]
        ],
        num_references=5,
    )
    change = reshape.diff(first, second)
    assert [c.title for c in change.new] == [
        "Vitamin D supplementation and fracture risk in older adults revisited"
    ]
    assert [(c.title, c.fields) for c in change.changed] == [(VITAMIN_D[1].title, ["retracted"])]
    assert [c.title for c in change.dropped] == [VITAMIN_D[3].title]
    assert reshape.diff(second, second).empty


def test_structured_abstract_facts_are_its_findings_not_its_background_aims_or_labels():
    abstract = (
        f"CONTEXT {INCONSISTENT} "
        "OBJECTIVE To test the effects of exercise training on health status among patients with heart failure. "
        f"RESULTS {KCCQ} CONCLUSIONS {MODEST}"
    )
    item = prepare.candidate(paper(60, "Exercise training in heart failure", abstract))
    found = detail.facts(item, "Does exercise training improve health status in heart failure?")
    # the result; never the background (CONTEXT, though the model calls it evidence) or the aim
    # (OBJECTIVE), nor a conclusion the model rates more than FACT_MARGIN under the result (0.6 vs 0.9)
    assert [(f.locator, f.confidence) for f in found] == [
        ("abstract sentence 3", FactConfidence.high)
    ]
    close = detail.facts(
        item,
        "Does exercise training improve health status in heart failure?",
        FixedJudge(
            {KCCQ: (0.85, 0.05, 0.1), MODEST: (0.75, 0.05, 0.2), INCONSISTENT: (0.3, 0.4, 0.3)}, {}
        ),
    )
    assert [(f.locator, f.confidence) for f in close] == [
        ("abstract sentence 3", FactConfidence.high),
        ("abstract sentence 4", FactConfidence.high),
    ]
    assert all(f.statement in abstract and not f.statement.split()[0].isupper() for f in found)
    assert (
        "stance",
        "exercise training improve health status in heart failure",
        [
            INCONSISTENT,
            "To test the effects of exercise training on health status among patients with heart failure.",
            KCCQ,
            MODEST,
        ],
    ) in JUDGE.calls, "the prompt as a statement, the sentences without their section labels"


def test_a_non_significant_trend_comes_after_the_established_results_and_is_never_high():
    # the demo's source list gave a collaborative-care trial's "trend toward greater improvement … (P = 0.10)" as [high]
    abstract = f"RESULTS {TREND} {KCCQ}"
    found = detail.facts(
        prepare.candidate(paper(62, "Exercise training in heart failure", abstract)),
        "Does exercise training improve health status in heart failure?",
    )
    assert [(f.statement, f.confidence) for f in found] == [
        (KCCQ, FactConfidence.high),
        (TREND, FactConfidence.medium),
    ]


def test_design_sentences_are_facts_only_when_the_source_states_nothing_else():
    abstract = (
        "OBJECTIVE To test the effects of exercise training on health status in heart failure. "
        "DESIGN, SETTING, AND PATIENTS Multicenter, randomized controlled trial among 2331 outpatients "
        "with heart failure."
    )
    found = detail.facts(
        prepare.candidate(paper(61, "Exercise training in heart failure: design", abstract)),
        "exercise",
    )
    assert [(f.locator, f.confidence) for f in found] == [
        ("abstract sentence 2", FactConfidence.inferred)
    ]


def test_a_corpus_source_carries_its_corpus_id_doi_authors_and_year():
    from research_contracts import SourceHit

    library = SourceHit(
        source_id="corpus:smith2020",
        source="corpus",
        title="Exercise in heart failure: a library paper",
        abstract="Exercise training improved quality of life in patients with heart failure.",
        authors=["Smith, J.", "Jones, K."],
        year=2020,
        doi="10.1000/hf.2020",
        venue="Heart Journal",
    )
    bare = SourceHit(
        source_id="corpus:4983",
        source="corpus",
        title="A corpus paper without a DOI",
        abstract="Some text here.",
    )
    item, other = prepare.candidate(library), prepare.candidate(bare)
    verdict = experiment.Judgement("strong", 0.9, "", 0.9)
    listed = reshape.listed(
        item, verdict, detail.SourceDetail(summary="s"), DetailLevel.citation_summary
    )
    assert (listed.origin_id, listed.url, listed.doi) == (
        "corpus:smith2020",
        "https://doi.org/10.1000/hf.2020",
        "10.1000/hf.2020",
    )
    assert (listed.authors, listed.date, listed.publication) == (
        ["Smith, J.", "Jones, K."],
        date(2020, 1, 1),
        "Heart Journal",
    )
    plain = reshape.listed(
        other, verdict, detail.SourceDetail(summary="s"), DetailLevel.citation_summary
    )
    assert (plain.origin_id, plain.url) == (
        "corpus:4983",
        "corpus:4983",
    )  # still a link a reader can follow
