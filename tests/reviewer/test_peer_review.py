"""The peer reviewer's seven checks, each on a crafted report, and both verdict paths of the loop —
with the real corpus tools (the connector on the real bus), the shipped judgement models and the
run recorded on JetStream. Check 3's trained-judgement part: a finding whose paper the relevance
model puts off the topic, and a SUPPORTED tag whose agreeing quote the stance model does not read
as support, are MAJOR — and the author's second round drops them."""

from __future__ import annotations

import re
import uuid

import pytest
from faststream import FastStream
from nats.js import JetStreamContext
from sqlalchemy import text

from research_contracts.corpus_tools import PaperRecord
from research_contracts.reviews import RequestReview
from research_judgement import get_judge
from research_llm.offline.relevance import Relevance, default_encoder
from research_modes import ConnectorClient
from research_reports import Finding, Quote, Report, check_report
from research_reviewer import judged
from research_reviewer.author import OfflineAuthor
from research_reviewer.compose import compose, reference_of
from research_reviewer.critique import PeerReview, Severity
from research_reviewer.evidence import KeyFinding, Sentence, SubQuestion, sentences_of, statement_of
from research_reviewer.experiment import review_loop
from research_reviewer.peer_review import PeerReviewer
from research_reviewer.prepare import review_job
from research_reviewer.settings import ReviewerSettings
from research_reviewer.tools import Toolbox
from research_runs import RunRecorder, replay
from tests.reviewer.conftest import TOPIC

pytestmark = pytest.mark.integration
RELEVANCE = Relevance(default_encoder())
# Demo-corpus papers far from TOPIC (the old lexical author quoted both in its heart-failure review).
SHOULDER, CHILDHOOD = "corpus:4200695", "corpus:12205576"


@pytest.fixture
def port(nc, connector_service: FastStream) -> ConnectorClient:
    return ConnectorClient(lambda: nc, timeout_s=20.0)


_DRAFTS: dict[str, tuple[OfflineAuthor, Report]] = {}


@pytest.fixture
async def drafted(port: ConnectorClient, js: JetStreamContext) -> tuple[OfflineAuthor, Report]:
    """One real offline draft of TOPIC, written once for the module (tests copy it before crafting)."""
    if TOPIC not in _DRAFTS:
        author = OfflineAuthor(RELEVANCE, ReviewerSettings())
        job = review_job(RequestReview(topic=TOPIC))
        _DRAFTS[TOPIC] = (
            author,
            await author.draft(
                job, Toolbox(port, RunRecorder(js, f"draft-{uuid.uuid4().hex[:8]}"))
            ),
        )
    return _DRAFTS[TOPIC]


async def _review(report: Report, port: ConnectorClient, js: JetStreamContext) -> PeerReview:
    tools = Toolbox(port, RunRecorder(js, f"pr-{uuid.uuid4().hex[:8]}", agent="peer_reviewer"))
    return await PeerReviewer(spot_checks=3).review(report, check_report(report), TOPIC, tools, 1)


def _issues(review: PeerReview, check: int) -> list:
    return [i for i in review.issues if i.check == check]


async def test_the_offline_draft_passes_all_seven_checks(drafted, port, js) -> None:
    _, report = drafted
    review = await _review(report, port, js)
    assert [i for i in review.issues if i.severity is not Severity.minor] == [], review.render()
    assert review.verdict == "PASS" and set(review.checks) == {str(n) for n in range(1, 8)}
    assert review.render().startswith("VERDICT: PASS\n\nISSUES:")


async def test_check_1_missing_section_is_critical(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    report.sections = [s for s in report.sections if s.title != "Research Gaps"]
    review = await _review(report, port, js)
    assert [(i.severity, i.section) for i in _issues(review, 1)] == [
        (Severity.critical, "Research Gaps")
    ]
    assert review.verdict == "REVISION_NEEDED"


async def test_check_2_unknown_id_and_wrong_title_are_critical(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    report.references[0].title = "A paper that was never written"
    report.references[1].paper_id = "corpus:999999999"
    report.section("Introduction").body += "\n\nThis sentence cites nothing real [42]."
    review = await _review(report, port, js)
    found = _issues(review, 2)
    assert {i.reference_id for i in found} >= {report.references[0].id, report.references[1].id, 42}
    assert (
        all(i.severity is Severity.critical for i in found) and review.verdict == "REVISION_NEEDED"
    )


async def test_check_3_tag_that_does_not_fit_the_evidence_is_major(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    key = report.section("Key Findings")
    single = next(f for f in key.findings if len(f.cited_ids()) == 1)
    single.tag = "SUPPORTED"
    key.findings[0].tag = None
    review = await _review(report, port, js)
    problems = {(i.finding_id, i.severity) for i in _issues(review, 3)}
    assert (single.key(), Severity.major) in problems and (
        key.findings[0].key(),
        Severity.major,
    ) in problems


async def test_check_4_a_finding_the_corpus_does_not_hold_is_major(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    finding = report.section("Key Findings").findings[0]
    invented = "Patients who exercised grew 12 centimetres taller within 3 weeks of training."
    finding.statement = invented
    finding.quotes = [Quote(reference_id=finding.quotes[0].reference_id, text=invented)]
    review = await _review(report, port, js)
    assert any(
        i.finding_id == finding.key() and i.severity is Severity.major for i in _issues(review, 4)
    )


async def test_check_5_most_cited_paper_left_out_is_a_minor_missed_paper(
    drafted, port, js, sessions
) -> None:
    report = drafted[1].model_copy(deep=True)
    cited = [r.paper_id.removeprefix("corpus:") for r in report.references if r.paper_id]
    async with sessions() as session, session.begin():
        external_id = await session.scalar(
            text(
                """SELECT p.external_id FROM corpus_papers p WHERE p.external_id = ANY(:cited) AND EXISTS (
                 SELECT 1 FROM corpus_chunks c WHERE c.paper_id = p.id AND (to_tsvector('english', p.title) || to_tsvector('english', c.text)) @@ websearch_to_tsquery('english', 'exercise training'))
               ORDER BY p.id LIMIT 1"""
            ),
            {"cited": cited},
        )
        await session.execute(
            text("UPDATE corpus_papers SET citation_count = 5000 WHERE external_id = :id"),
            {"id": external_id},
        )
    report.references = [
        r for r in report.references if r.paper_id != f"corpus:{external_id}"
    ]  # the draft leaves it out
    try:
        review = await _review(report, port, js)
    finally:
        async with sessions() as session, session.begin():
            await session.execute(
                text("UPDATE corpus_papers SET citation_count = NULL WHERE external_id = :id"),
                {"id": external_id},
            )
    assert [m.paper_id for m in review.missed_papers] == [f"corpus:{external_id}"]
    assert [i.severity for i in _issues(review, 5)] == [Severity.minor]
    assert f"(paper_id: corpus:{external_id}, citations: 5000)" in review.render()


async def test_check_6_a_debate_whose_sides_agree_is_major(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    lead = report.section("Key Findings").findings[0]
    debates = report.section("Contradictions and Debates")
    debates.findings = [
        Finding(
            id=f"{lead.key()}:side-a",
            statement=lead.statement,
            citations=lead.citations[:1],
            group="Debate 1",
            quotes=lead.quotes[:1],
        ),
        Finding(
            id=f"{lead.key()}:side-b",
            statement=lead.statement,
            citations=lead.citations[:1],
            group="Debate 1",
            quotes=lead.quotes[:1],
        ),
    ]
    review = await _review(report, port, js)
    assert [(i.finding_id, i.severity) for i in _issues(review, 6)] == [
        (lead.key(), Severity.major)
    ]


async def test_check_7_direction_without_a_gap_is_minor(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    report.section(
        "Suggested Future Research Directions"
    ).body += "\n- D99 (addresses G99): study something unrelated"
    review = await _review(report, port, js)
    assert [i.severity for i in _issues(review, 7)] == [Severity.minor]


async def _paper(port: ConnectorClient, js: JetStreamContext, paper_id: str) -> PaperRecord:
    tools = Toolbox(port, RunRecorder(js, f"get-{uuid.uuid4().hex[:8]}"))
    (paper,) = await tools.get_papers([paper_id])
    return paper


def _not_support(statement: str, paper: PaperRecord) -> str:
    """A sentence of `paper` the stance model does not read as supporting `statement`."""
    found = [
        s
        for s in sentences_of(paper)
        if judged.stance_label(get_judge(), statement, s, paper.title) != "SUPPORT"
    ]
    assert found, f"every sentence of {paper.paper_id} supports {statement!r}?"
    return found[0]


async def test_check_3_a_finding_whose_paper_is_off_the_topic_is_major(drafted, port, js) -> None:
    report = drafted[1].model_copy(deep=True)
    shoulder = await _paper(port, js, SHOULDER)
    assert judged.off_topic(
        get_judge(), TOPIC, [judged.passage(shoulder)], ReviewerSettings().cut
    ) == [True]
    sentence = sentences_of(shoulder)[-1]
    ref = report.add_reference(reference_of(shoulder))
    key = report.section("Key Findings")
    key.findings.append(
        Finding(
            statement=statement_of(sentence),
            tag="INSUFFICIENT",
            citations=[ref],
            group=key.findings[0].group,
            quotes=[Quote(reference_id=ref, text=sentence)],
        )
    )
    review = await _review(report, port, js)
    off = [i for i in _issues(review, 3) if i.kind == "off_topic"]
    assert [(i.paper_id, i.severity) for i in off] == [
        (SHOULDER, Severity.major)
    ] and review.verdict == "REVISION_NEEDED"


async def test_check_3_a_supported_tag_the_stance_model_does_not_back_is_major(
    drafted, port, js
) -> None:
    report = drafted[1].model_copy(deep=True)
    finding = report.section("Key Findings").findings[0]
    childhood = await _paper(port, js, CHILDHOOD)
    side = _not_support(finding.statement, childhood)
    ref = report.add_reference(reference_of(childhood))
    finding.tag = "SUPPORTED"
    finding.citations = [*finding.citations, ref]
    finding.quotes = [*finding.quotes, Quote(reference_id=ref, text=side)]
    review = await _review(report, port, js)
    flagged = [i for i in _issues(review, 3) if i.kind == "tag_contradicted"]
    assert [(i.finding_id, i.paper_id, i.severity) for i in flagged] == [
        (finding.key(), CHILDHOOD, Severity.major)
    ]
    assert review.verdict == "REVISION_NEEDED"


class MisjudgedFirstDraft:
    """The real offline author whose dossier gains an off-topic finding and, on its first finding, an
    agreeing side the stance model does not back — what a careless author (or model) would write."""

    def __init__(self, inner: OfflineAuthor, port: ConnectorClient, js: JetStreamContext) -> None:
        self.inner, self.port, self.js = inner, port, js
        self.model = inner.model

    def known_papers(self):
        return self.inner.known_papers()

    async def draft(self, job, tools):
        await self.inner.draft(job, tools)
        dossier = self.inner.dossier
        shoulder, childhood = (
            await _paper(self.port, self.js, SHOULDER),
            await _paper(self.port, self.js, CHILDHOOD),
        )
        for paper in (shoulder, childhood):
            dossier.papers[paper.paper_id] = paper
        question = (
            dossier.questions[0]
            if dossier.questions
            else SubQuestion("Q1", "What do the studies find?", job.topic)
        )
        dossier.findings.append(
            KeyFinding("Q1-F9", question, Sentence(shoulder, sentences_of(shoulder)[-1], 0.9))
        )
        first = dossier.findings[0]
        first.opposing = []
        first.agreeing = [Sentence(childhood, _not_support(first.statement, childhood), 0.9)]
        return compose(dossier, model=self.model)

    async def revise(self, report, review, tools):
        return await self.inner.revise(report, review, tools)


async def test_an_off_topic_and_mistagged_draft_is_revised_in_round_two(port, js) -> None:
    job = review_job(RequestReview(topic=TOPIC, run_id=f"rv-judged-{uuid.uuid4().hex[:8]}"))
    recorder = RunRecorder(js, job.run_id)
    async with recorder.running():
        outcome = await review_loop(
            job,
            MisjudgedFirstDraft(OfflineAuthor(RELEVANCE, ReviewerSettings()), port, js),
            PeerReviewer(3),
            port,
            recorder,
        )
    first, second = outcome.rounds
    kinds = {(i.kind, i.paper_id) for i in first.review.issues if i.severity is Severity.major}
    assert {
        ("off_topic", SHOULDER),
        ("tag_contradicted", CHILDHOOD),
    } <= kinds and first.review.verdict == "REVISION_NEEDED"
    assert second.review.verdict == "PASS", second.review.render()
    assert SHOULDER not in {r.paper_id for r in outcome.report.references}
    mistagged = next(i.finding_id for i in first.review.issues if i.kind == "tag_contradicted")
    key_findings = outcome.report.section("Key Findings")
    assert key_findings is not None
    for finding in key_findings.findings:
        if finding.key() == mistagged:
            for cited in finding.cited_ids():
                reference = outcome.report.reference(cited)
                assert reference is not None and reference.paper_id != CHILDHOOD


class SloppyFirstDraft:
    """The real offline author whose first draft loses a section and cites a reference that does not exist."""

    def __init__(self, inner: OfflineAuthor) -> None:
        self.inner = inner
        self.model = inner.model

    def known_papers(self):
        return self.inner.known_papers()

    async def draft(self, job, tools):
        report = await self.inner.draft(job, tools)
        report.sections = [s for s in report.sections if s.title != "Contradictions and Debates"]
        report.section("Introduction").body += "\n\nSee also the review of all reviews [77]."
        return report

    async def revise(self, report, review, tools):
        return await self.inner.revise(report, review, tools)


async def test_revision_needed_then_revised_then_pass(port, js) -> None:
    job = review_job(RequestReview(topic=TOPIC, run_id=f"rv-loop-{uuid.uuid4().hex[:8]}"))
    author = SloppyFirstDraft(OfflineAuthor(RELEVANCE, ReviewerSettings()))
    recorder = RunRecorder(js, job.run_id)
    async with recorder.running():
        outcome = await review_loop(job, author, PeerReviewer(3), port, recorder)
    first, second = outcome.rounds
    assert first.review.verdict == "REVISION_NEEDED" and first.check.unknown_ids == [77]
    assert {(i.check, i.severity) for i in first.review.issues} >= {
        (1, Severity.critical),
        (2, Severity.critical),
    }
    assert (
        second.review.verdict == "PASS"
        and outcome.verdict == "PASS"
        and not outcome.check.unknown_ids
    )
    assert outcome.report.section("Contradictions and Debates") is not None
    events = [e async for _, e in replay(js, job.run_id)]
    assert [e.verdict for e in events if e.type == "verdict"] == ["REVISION_NEEDED", "PASS"]
    assert [e.agent for e in events if e.type == "agent_start"] == [
        "researcher",
        "peer_reviewer",
        "researcher",
        "peer_reviewer",
    ]


async def test_a_single_round_never_passes_a_report_with_an_unknown_id(port, js) -> None:
    job = review_job(
        RequestReview(topic=TOPIC, max_iterations=1, run_id=f"rv-one-{uuid.uuid4().hex[:8]}")
    )
    recorder = RunRecorder(js, job.run_id)
    async with recorder.running():
        outcome = await review_loop(
            job,
            SloppyFirstDraft(OfflineAuthor(RELEVANCE, ReviewerSettings())),
            PeerReviewer(3),
            port,
            recorder,
        )
    assert (
        len(outcome.rounds) == 1 and outcome.verdict == "REVISION_NEEDED" and outcome.check.blocking
    )


async def test_every_key_paper_the_landscape_lists_is_read_for_findings(port, js) -> None:
    # The demo review listed "Neutrophil extracellular chromatin traps connect innate immune response to
    # autoimmunity" as a key paper on the topic (from metadata search, which returns no text) while its
    # introduction counted 2 papers on the topic and never read the third's findings.
    topic = "neutrophil extracellular traps and citrullinated autoantigens in rheumatoid arthritis"
    author = OfflineAuthor(RELEVANCE, ReviewerSettings())
    report = await author.draft(
        review_job(RequestReview(topic=topic)),
        Toolbox(port, RunRecorder(js, f"draft-{uuid.uuid4().hex[:8]}")),
    )
    introduction, landscape_section = (
        report.section("Introduction"),
        report.section("Research Landscape"),
    )
    assert introduction is not None and landscape_section is not None
    intro, landscape = introduction.body, landscape_section.body
    on_topic = re.search(r"(\d+) are on the topic", intro)
    assert on_topic is not None, intro
    read = int(on_topic.group(1))
    listed = [line for line in landscape.split("\n\n") if re.search(r"\[\d+\]\.$", line)]
    assert listed and read >= len(listed), report.render_markdown()
    assert f"{read} of those retrieved for this topic are on it" in landscape
