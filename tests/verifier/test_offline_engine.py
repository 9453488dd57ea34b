"""The verifier's offline engine on the trained judgement (a fixed-probability judge, so the rule is
what is tested): off-topic papers are never evidence, retrieval is reranked by relevance, each
on-topic paper's evidence sentences carry the stance model's label, a paper under the on-topic cut
counts only when it squarely states a finding, a paper that never names the statement's subject is
no evidence on it, a stated condition makes a supporting sentence QUALIFY, and the report quotes the evidence the verdict rests on."""

from __future__ import annotations

import uuid

import pytest

from research_verification import PassageStance, parse_claim, thresholds
from research_verifier import reshape
from research_verifier.experiment import Evidence, OfflineEngine, rerank, sentences_of
from research_verifier.prepare import VerificationJob
from research_verifier.tools import Passage
from tests.verification.fixed_judge import FixedJudge

pytestmark = pytest.mark.unit

CLAIM = "Exercise training improves quality of life in patients with chronic heart failure"
HF_ACTION = (
    "Exercise training conferred modest but statistically significant improvements in self-reported health "
    "status compared with usual care."
)
DESIGN = "Patients were randomly assigned to exercise training or usual care in 82 centres."
AFFERENTS = "Exercise training significantly enhanced the inhibitory influence of cardiac afferents on vascular resistance."
WOMEN = "Training improved quality of life only among women over 70 years of age."
NULL = "Exercise training did not improve quality of life compared with usual care."

PAPERS = [
    Passage(
        "corpus:afferents",
        "Cardiac afferents and exercise in rats",
        f"{AFFERENTS} Rats were trained for 8 weeks.",
    ),
    Passage(
        "corpus:hf-action",
        "HF-ACTION: exercise training and health status",
        f"{DESIGN} {HF_ACTION}",
        year=2009,
    ),
    Passage("corpus:women", "Exercise in older women with heart failure", f"{DESIGN} {WOMEN}"),
    Passage("corpus:null", "A small trial of exercise in heart failure", f"{DESIGN} {NULL}"),
]
JUDGE = FixedJudge(
    {
        AFFERENTS: (0.7, 0.1, 0.2),
        HF_ACTION: (0.8, 0.1, 0.1),
        WOMEN: (0.75, 0.1, 0.15),
        NULL: (0.1, 0.8, 0.1),
    },
    {
        "Cardiac afferents and exercise in rats": 0.05,
        "HF-ACTION: exercise training and health status": 0.95,
        "Exercise in older women with heart failure": 0.8,
        "A small trial of exercise in heart failure": 0.7,
    },
)


def job() -> VerificationJob:
    return VerificationJob(
        uuid.uuid4(), "run-1", CLAIM, parse_claim(CLAIM), ["corpus"], {}, False, "test"
    )


def test_retrieval_is_reranked_by_relevance():
    statement = parse_claim(CLAIM)[0]
    assert [p.paper_id for p in rerank(statement, PAPERS, JUDGE)] == [
        "corpus:hf-action",
        "corpus:women",
        "corpus:null",
        "corpus:afferents",
    ]


def test_off_topic_papers_are_never_evidence_and_on_topic_ones_are_labelled_by_the_stance_model():
    labelled = OfflineEngine(JUDGE, evidence_model="sentence").judge_statement(
        parse_claim(CLAIM)[0], 0, PAPERS
    )
    by_source = {p.source_id: p for p in labelled}
    assert "corpus:afferents" not in by_source, (
        "the cardiac-afferents paper is off the claim's topic"
    )
    assert (
        by_source["corpus:hf-action"].label is PassageStance.SUPPORTS
        and by_source["corpus:hf-action"].text == HF_ACTION
    )
    assert by_source["corpus:women"].label is PassageStance.QUALIFIES
    assert (
        by_source["corpus:women"].conditions and "women" in by_source["corpus:women"].conditions[0]
    )
    assert by_source["corpus:null"].label is PassageStance.CONTRADICTS
    assert all(p.text != DESIGN for p in labelled), "a design sentence is no evidence"


def test_under_the_on_topic_cut_only_a_paper_that_squarely_states_a_finding_counts():
    sure = "Twelve weeks of exercise training raised the Minnesota quality-of-life score by 9 points (P < .001)."
    unsure = "Exercise capacity and quality of life were measured in 40 patients after training."
    papers = [
        Passage(
            "corpus:sure", "Exercise training in 40 patients with heart failure", f"{DESIGN} {sure}"
        ),
        Passage(
            "corpus:unsure", "Exercise training and capacity in heart failure", f"{DESIGN} {unsure}"
        ),
    ]
    under = {
        "Exercise training in 40 patients with heart failure": 0.3,
        "Exercise training and capacity in heart failure": 0.3,
    }
    judge = FixedJudge({sure: (0.75, 0.1, 0.15), unsure: (0.45, 0.15, 0.4)}, under)
    limits = thresholds(judge)
    assert limits.floor < 0.3 < limits.on_topic and 0.45 < limits.strong_finding <= 0.75
    assert {
        p.source_id
        for p in OfflineEngine(judge, evidence_model="sentence").judge_statement(
            parse_claim(CLAIM)[0], 0, papers
        )
    } == {"corpus:sure"}
    below_floor = FixedJudge(judge.stances, {title: 0.05 for title in under})
    assert (
        OfflineEngine(below_floor, evidence_model="sentence").judge_statement(
            parse_claim(CLAIM)[0], 0, papers
        )
        == []
    )


def test_a_study_that_never_names_the_statements_subject_is_no_evidence_on_it():
    # the demo's collaborative-care trial: on the outcome (quality of life), rated on topic, but no exercise in it
    care = (
        "Improvements in global quality of life rating were significantly greater in patients in the "
        "intervention group."
    )
    trial = Passage(
        "corpus:care",
        "Multi-condition collaborative care and successful ageing",
        f"Patients with diabetes or coronary heart disease and depression were randomised. {care}",
    )
    judge = FixedJudge(
        {**JUDGE.stances, care: (0.7, 0.1, 0.2)},
        {**JUDGE.relevances, "Multi-condition collaborative care and successful ageing": 0.9},
    )
    labelled = OfflineEngine(judge, evidence_model="sentence").judge_statement(
        parse_claim(CLAIM)[0], 0, [trial, *PAPERS]
    )
    assert "corpus:care" not in {p.source_id for p in labelled}
    assert "corpus:hf-action" in {p.source_id for p in labelled}


def test_only_the_most_on_topic_papers_are_judged_sentence_by_sentence():
    judge = FixedJudge(JUDGE.stances, JUDGE.relevances)
    OfflineEngine(judge, papers=1, evidence_model="sentence").judge_statement(
        parse_claim(CLAIM)[0], 0, PAPERS
    )
    judged = [sentences for kind, _, sentences in judge.calls if kind == "stance"]
    assert judged == [[DESIGN, HF_ACTION]], "one paper: the most on-topic (HF-ACTION)"


def test_the_report_quotes_the_evidence_and_names_the_conditions():
    evidence = Evidence(passages={p.paper_id: p for p in PAPERS})
    evidence.labelled = OfflineEngine(JUDGE, evidence_model="sentence").judge_statement(
        parse_claim(CLAIM)[0], 0, PAPERS
    )
    report, assessment, check, dropped = reshape.checked(
        job(), evidence.best(), evidence.passages, engine="offline", searches=4, quotes_per_side=6
    )
    assert not check.blocking and check.unsupported == 0 and dropped == 0
    assert (
        assessment.supporting_sources,
        assessment.contradicting_sources,
        assessment.qualifying_sources,
    ) == (1, 1, 1)
    sections = {s.title: s for s in report.sections}
    (qualifying,) = sections["Nuances and Conditions"].findings
    assert "holds" in (qualifying.group or "") and "women" in (qualifying.group or "")
    body = sections["Confidence Assessment"].body
    assert (
        HF_ACTION in body
        and "Supported by HF-ACTION" in body
        and f"Contradicted by A small trial of exercise in heart failure: {NULL}" in body
    )
    assert "research_verification.verdict" not in body, "no boilerplate about the rule"


def test_each_side_quotes_its_strongest_evidence_first():
    from research_verification.verdict import LabelledPassage

    passages = {p.paper_id: p for p in PAPERS}
    chosen = [
        LabelledPassage("corpus:women", PassageStance.SUPPORTS, 0.55, text=WOMEN),
        LabelledPassage("corpus:hf-action", PassageStance.SUPPORTS, 0.9, text=HF_ACTION),
    ]
    report, *_ = reshape.checked(
        job(), chosen, passages, engine="offline", searches=1, quotes_per_side=6
    )
    (section,) = [s for s in report.sections if s.title == "Corroborating Evidence"]
    assert next(f.statement for f in section.findings) == HF_ACTION
    capped, *_ = reshape.checked(
        job(), chosen, passages, engine="offline", searches=1, quotes_per_side=1
    )
    (section,) = [s for s in capped.sections if s.title == "Corroborating Evidence"]
    assert [f.statement for f in section.findings] == [HF_ACTION]
    # a title that ends with a full stop is not followed by ".:" in the assessment
    titled = {
        **passages,
        "corpus:hf-action": Passage(
            "corpus:hf-action", "HF-ACTION randomized controlled trial.", HF_ACTION
        ),
    }
    report, *_ = reshape.checked(
        job(), chosen, titled, engine="offline", searches=1, quotes_per_side=1
    )
    body = next(s.body for s in report.sections if s.title == "Confidence Assessment")
    assert f"Supported by HF-ACTION randomized controlled trial: {HF_ACTION}" in body


def test_the_verifier_reads_a_long_structured_abstracts_conclusion() -> None:
    # HF-ACTION has 15 sentences; reading the first 12 stopped before its conclusion
    framing = [
        "CONTEXT Findings from previous studies of exercise training on health status have been inconsistent.",
        "OBJECTIVE To test the effects of exercise training on health status in heart failure.",
        "DESIGN, SETTING, AND PATIENTS Multicenter, randomized controlled trial among 2331 outpatients.",
        *(
            f"The KCCQ subscale number {n} was scored from 0 to 100 in every patient."
            for n in range(9)
        ),
    ]
    found = [
        "RESULTS Median follow-up was 2.5 years in both groups of the trial.",
        "CONCLUSIONS Exercise training conferred modest but significant improvements in self-reported health status.",
    ]
    assert sentences_of(" ".join(framing + found)) == found
