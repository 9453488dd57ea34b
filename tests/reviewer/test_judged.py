"""The author's judgement steps (`research_reviewer.judged`) and what a peer review teaches it
(`compose.Exclusions`), with a scripted judge: which papers stay, which sentences become findings,
how subtopics are named, how tags follow the stance model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
import pytest

from research_contracts.corpus_tools import PaperRecord
from research_reviewer import judged
from research_reviewer.compose import Exclusions
from research_reviewer.critique import Issue, PeerReview, Severity
from research_reviewer.evidence import KeyFinding, Sentence, SubQuestion, sentences_of

pytestmark = pytest.mark.unit

THRESHOLDS = {"rationale": 0.5, "top_k": 1, "contradict_weight": 1.0}


class ScriptedJudge:
    """Relevance by title word, stance by a table of (claim word, sentence word) → label."""

    thresholds = THRESHOLDS

    def __init__(self, on_topic_word: str, stances: dict[tuple[str, str], str]) -> None:
        self.on_topic_word = on_topic_word
        self.stances = stances
        self.config: dict[str, Any] = {}  # no relevance thresholds of its own: the defaults

    def relevance(self, question: str, passages: Sequence[str | tuple[str, str]]) -> np.ndarray:
        return np.array([0.9 if self.on_topic_word in p[0].lower() else 0.1 for p in passages])

    def stance(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        rows = []
        for sentence in sentences:
            label = next(
                (
                    lab
                    for (c, s), lab in self.stances.items()
                    if c in claim.lower() and s in sentence.lower()
                ),
                "NEI",
            )
            rows.append(
                {
                    "SUPPORT": [0.8, 0.1, 0.1],
                    "CONTRADICT": [0.1, 0.8, 0.1],
                    "NEI": [0.05, 0.05, 0.9],
                }[label]
            )
        return np.array(rows, dtype=float)

    def evidence(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        return 1.0 - self.stance(claim, sentences, titles)[:, 2]


class Embedder:
    """Unit vectors by keyword: sentences sharing the keyword are one subtopic."""

    axes = ("oxygen", "mortality", "depression")

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            row = np.array([1.0 if a in text.lower() else 0.0 for a in self.axes] + [0.3])
            rows.append(row / np.linalg.norm(row))
        return np.array(rows)


def paper(pid: str, title: str, text: str) -> PaperRecord:
    return PaperRecord(paper_id=pid, title=title, text=text)


def test_on_topic_keeps_the_papers_the_relevance_model_keeps_best_first() -> None:
    judge = ScriptedJudge("heart", {})
    papers = [
        paper("corpus:1", "Shoulder impingement surgery", "x"),
        paper("corpus:2", "Heart failure training", "y"),
    ]
    kept = judged.on_topic(judge, "exercise in heart failure", papers, floor=0.5)
    assert [k.paper.paper_id for k in kept] == ["corpus:2"] and kept[
        0
    ].probability == pytest.approx(0.9)
    cut = judged.TopicCut(on_topic=0.5)
    assert judged.off_topic(
        judge, "exercise in heart failure", [judged.passage(p) for p in papers], cut
    ) == [True, False]


class UnderTheCut(ScriptedJudge):
    """Every paper at P(on topic) 0.3: under the reviewer's cut, over its floor."""

    def relevance(self, question: str, passages: Sequence[str | tuple[str, str]]) -> np.ndarray:
        return np.full(len(passages), 0.3)


def test_a_paper_under_the_relevance_cut_counts_with_a_squarely_stated_finding_that_names_the_topic() -> (
    None
):
    topic = "Activation of PPM1D enhances p53 function"
    named = paper(
        "corpus:1",
        "Wip1 phosphatase in tumours",
        "RESULTS Amplified PPM1D suppressed p53 activity in every breast tumour cell line we studied here.",
    )
    unnamed = paper(
        "corpus:2",
        "Adipose tissue macrophages",
        "RESULTS Alternatively activated macrophages secreted catecholamines in the cold in the mice studied here.",
    )
    silent = paper(
        "corpus:3",
        "PPM1D in zebrafish",
        "RESULTS The zebrafish PPM1D gene was cloned and sequenced from three separate strains of fish here.",
    )
    judge = UnderTheCut(
        "", {("ppm1d", "suppressed p53"): "SUPPORT", ("ppm1d", "catecholamines"): "SUPPORT"}
    )
    cut = judged.TopicCut(on_topic=0.5, floor=0.1, strong_finding=0.6)
    found = judged.evidence_sentences(
        judge, topic, [judged.OnTopic(p, 0.3) for p in (named, unnamed, silent)], cut
    )
    assert [s.paper.paper_id for s in found] == ["corpus:1"]
    assert judged.off_topic(
        judge, topic, [judged.passage(p) for p in (named, unnamed, silent)], cut
    ) == [False, True, True]
    assert judged.off_topic(
        judge, topic, [judged.passage(named)], judged.TopicCut(on_topic=0.5, floor=0.4)
    ) == [True]
    # without a cut every on-topic paper the caller passes gives its findings
    assert {
        s.paper.paper_id
        for s in judged.evidence_sentences(judge, topic, [judged.OnTopic(unnamed, 0.3)])
    } == {"corpus:2"}


def test_findings_are_the_sentences_the_judge_calls_evidence_never_framing_sentences() -> None:
    text = (
        "BACKGROUND Exercise training improves peak oxygen uptake in many earlier small trials of patients. "
        "We aimed to test whether training improves outcomes in heart failure patients. "
        "RESULTS Training raised peak oxygen uptake by 10 percent over twelve weeks in the trial. "
        "CONCLUSIONS Exercise training was safe in patients with heart failure and reduced symptoms. "
        "(ABSTRACT TRUNCATED AT 250 WORDS)"
    )
    record = paper("corpus:3", "Heart failure training", text)
    candidates = sentences_of(record)
    assert not any(c.startswith(("BACKGROUND", "We aimed")) for c in candidates)
    assert any(c.startswith("RESULTS") for c in candidates)
    judge = ScriptedJudge("heart", {("training", "raised peak oxygen"): "SUPPORT"})
    found = judged.evidence_sentences(
        judge, "training and heart failure", [judged.OnTopic(record, 0.9)]
    )
    assert [s.text for s in found] == [
        "RESULTS Training raised peak oxygen uptake by 10 percent over twelve weeks in the trial."
    ]
    assert found[0].relevance == pytest.approx(0.9 * 0.9)


class FixedAbstractModel:
    """The abstract model's say per title: (P(SUPPORT, CONTRADICT, NEI), P(rationale) per sentence); the rule is tested."""

    thresholds: ClassVar[dict[str, float]] = {
        "evidence": 0.85,
        "best_evidence": 0.3,
        "contradict_weight": 0.8,
    }

    def __init__(self, by_title: dict[str, tuple[tuple[float, float, float], list[float]]]) -> None:
        self.by_title = by_title
        self.claims: list[str] = []

    def judge(self, claim: str, papers):
        from research_judgement.abstract import AbstractJudgement

        self.claims.append(claim)
        return [
            AbstractJudgement(
                np.array(self.by_title.get(t, ((0.02, 0.02, 0.96), []))[0]),
                np.array(
                    (self.by_title.get(t, ((), [0.1] * len(s)))[1] + [0.1] * len(s))[: len(s)]
                ),
            )
            for t, s in papers
        ]


STRUCTURED = (
    "BACKGROUND Exercise training improves peak oxygen uptake in many earlier small trials of patients. "
    "RESULTS Training raised peak oxygen uptake by 10 percent over twelve weeks in the trial. "
    "CONCLUSIONS Exercise training was safe in patients with heart failure and reduced symptoms."
)


def test_the_abstract_model_decides_which_papers_are_on_the_topic_and_which_sentences_are_findings(
    monkeypatch,
) -> None:
    import research_judgement.abstract

    model = FixedAbstractModel(
        {
            "Heart failure training": (
                (0.9, 0.02, 0.08),
                [0.9, 0.8, 0.7],
            ),  # rests on its background sentence first
            "Training in the elderly": (
                (0.5, 0.1, 0.4),
                [0.2, 0.9],
            ),  # some evidence, under the bar every paper must clear
            "Shoulder impingement surgery": ((0.02, 0.01, 0.97), [0.5]),
        }
    )
    monkeypatch.setattr(research_judgement.abstract, "get_abstract_judge", lambda: model)
    trained = paper("corpus:1", "Heart failure training", STRUCTURED)
    elderly = paper(
        "corpus:2",
        "Training in the elderly",
        "Older adults were enrolled from clinics across the region. "
        "Training improved walking distance in older adults by a fifth over six months.",
    )
    shoulder = paper(
        "corpus:3",
        "Shoulder impingement surgery",
        "Surgery relieved shoulder pain in most of the operated patients.",
    )
    judge = ScriptedJudge("heart", {("training", "cut readmissions"): "SUPPORT"})
    ranked = [judged.OnTopic(p, 0.1) for p in (shoulder, elderly, trained)]
    kept, found = judged.abstract_evidence(judge, "exercise training heart failure", ranked)
    assert model.claims == ["exercise training heart failure"], "the topic as written, one call"
    assert [(o.paper.paper_id, round(o.probability, 2)) for o in kept] == [("corpus:1", 0.92)], (
        "over the bar only"
    )
    # its rationale sentences that are findings: the background one (a framing section) is not
    assert [s.text for s in found] == [
        "RESULTS Training raised peak oxygen uptake by 10 percent over twelve weeks in the trial."
    ]
    assert found[0].relevance == pytest.approx(0.91), (
        "P(evidence), a little less for the second rationale"
    )
    alone, found = judged.abstract_evidence(judge, "exercise training heart failure", ranked[:2])
    assert [o.paper.paper_id for o in alone] == ["corpus:2"], (
        "the most evidential paper of the call needs less"
    )
    assert [s.text for s in found] == [
        "Training improved walking distance in older adults by a fifth over six months."
    ]
    # a paper the abstract model reads no evidence in counts when the relevance model puts it over the cut,
    # with the sentence-level rule's findings
    named = paper(
        "corpus:4",
        "Heart failure rehabilitation",
        "Rehabilitation was offered to every patient at discharge. "
        "Exercise training cut readmissions in patients with heart failure in the programme.",
    )
    kept, found = judged.abstract_evidence(
        judge,
        "exercise training heart failure",
        [judged.OnTopic(named, 0.7), judged.OnTopic(shoulder, 0.2)],
        relevance_admits=0.5,
    )
    assert [(o.paper.paper_id, o.probability) for o in kept] == [("corpus:4", 0.7)]
    assert [s.text for s in found] == [
        "Exercise training cut readmissions in patients with heart failure in the programme."
    ]
    assert (
        judged.abstract_evidence(
            judge, "exercise training heart failure", [judged.OnTopic(named, 0.7)]
        )[0]
        == []
    ), "the abstract model alone"
    passages = [judged.passage(p) for p in (shoulder, trained, named)]
    topic = "exercise training heart failure"
    assert judged.off_topic(judge, topic, passages, judged.TopicCut(mode="abstract_only")) == [
        True,
        False,
        True,
    ]
    assert judged.off_topic(judge, topic, passages, judged.TopicCut(mode="abstract")) == [
        True,
        False,
        False,
    ], "the peer reviewer's check: the author's rule"


TITLES = {
    "corpus:1": "Peak oxygen uptake in trained heart failure patients",
    "corpus:2": "Peak oxygen uptake after training",
    "corpus:3": "Mortality in the exercise trial",
    "corpus:4": "Counselling in heart failure",
}


def _sentence(pid: str, text: str, score: float) -> Sentence:
    return Sentence(paper(pid, TITLES[pid], text), text, score)


def test_clusters_are_subtopics_named_by_their_distinctive_phrases_not_by_the_topic() -> None:
    pool = [
        _sentence("corpus:1", "Training raised peak oxygen uptake in the trial cohort.", 0.9),
        _sentence("corpus:2", "Peak oxygen uptake improved after twelve weeks of cycling.", 0.8),
        _sentence(
            "corpus:3",
            "All-cause mortality did not differ between the training and usual care groups.",
            0.7,
        ),
    ]
    background = (
        [s.text for s in pool]
        + [s.paper.title for s in pool]
        + ["Heart failure is common in older adults and costly."]
    )
    groups = judged.clusters(
        Embedder(), "exercise training in heart failure", pool, background, similarity=0.5, most=4
    )
    assert [sorted(g.papers) for g in groups] == [["corpus:1", "corpus:2"], ["corpus:3"]]
    questions = [g.question for g in groups]
    assert None not in questions
    first, second = (q.text for q in questions if q is not None)
    assert (
        "peak oxygen uptake" in first
        and first.endswith("?")
        and "training" not in first.split("on ", 1)[1]
    )
    assert "mortality" in second
    capped = judged.clusters(
        Embedder(), "exercise training in heart failure", pool, background, similarity=0.99, most=1
    )
    assert len(capped) == 1 and len(capped[0].members) == 3


NET_TITLES = {
    "corpus:11328820": "NETs are a source of citrullinated autoantigens and stimulate inflammatory responses in "
    "rheumatoid arthritis.",
    "corpus:30041340": "Antibodies from patients with rheumatoid arthritis target citrullinated histone 4 contained "
    "in neutrophils extracellular traps.",
}


def test_a_subtopic_is_named_by_words_specific_in_the_literature_not_by_generic_ones() -> None:
    # the demo review asked "What do the studies find on inflammatory responses and source?", then "… NETs and source?"
    net = paper("corpus:11328820", NET_TITLES["corpus:11328820"], "x")
    members = [
        Sentence(net, text, score)
        for text, score in (
            (
                (
                    "Indeed, during NETosis, neutrophils externalized the citrullinated autoantigens implicated in RA pathogenesis, "
                    "and anti-citrullinated vimentin antibodies potently induced NET formation."
                ),
                0.9,
            ),
            (
                "Further, netting neutrophils infiltrated RA synovial tissue, rheumatoid nodules, and skin.",
                0.8,
            ),
            (
                "In turn, NETs significantly augmented inflammatory responses in RA and OA synovial fibroblasts.",
                0.7,
            ),
        )
    ]
    other = (
        "RESULTS RA sera reacted with a deiminated antigen of 11 KDa from activated neutrophils, recognised also by "
        "anti-H4 and antideiminated H4 antibodies."
    )
    background = [*(m.text for m in members), other, *NET_TITLES.values()]
    (group,) = judged.clusters(
        Embedder(),
        "neutrophil extracellular traps and citrullinated autoantigens in rheumatoid arthritis",
        members,
        background,
        similarity=0.5,
        most=4,
    )
    assert group.question is not None
    name = group.question.text
    assert (
        name == "What do the studies find on NETs and inflammatory responses?"
    )  # "NETs" as its papers write it
    assert "source" not in judged.phrases(
        NET_TITLES["corpus:11328820"]
    )  # "a source of …" names nothing alone


def test_subtopic_names_are_subjects_not_fragments_of_a_clause() -> None:
    # the demo review asked "What do the studies find on stimulate inflammatory responses and source of citrullinated?"
    names = set(
        judged.phrases(
            "NETs are a source of citrullinated autoantigens and stimulate inflammatory responses in "
            "rheumatoid arthritis"
        )
    )
    names |= set(
        judged.phrases(
            "Antibodies target citrullinated histone 4 contained in neutrophils extracellular traps"
        )
    )
    assert {
        "citrullinated autoantigens",
        "inflammatory responses",
        "citrullinated histone",
        "extracellular traps",
    } <= names
    assert not names & {
        "stimulate inflammatory responses",
        "source of citrullinated",
        "contained in neutrophils",
        "target citrullinated",
        "histone contained",
    }
    # bench:review asked about "force to skin and kinase links", "men the framingham", "plays a crucial"
    titles = (
        "Focal adhesion kinase links mechanical force to skin fibrosis via inflammatory signaling",
        "Residual lifetime risk for hypertension in middle-aged women and men: The Framingham Heart Study",
        "The Ly49Q receptor plays a crucial role in neutrophil polarization and migration",
        "Survival formally validating the antiapoptotic effect; iHepSCs iHepSCs were derived",
    )
    names = {n for title in titles for n in judged.phrases(title)}
    assert {
        "focal adhesion",
        "mechanical force",
        "middle-aged women",
        "neutrophil polarization",
        "quality of life",
    } <= names | set(judged.phrases("Exercise improved quality of life"))
    assert not names & {
        "force to skin",
        "kinase links",
        "kinase links mechanical",
        "men the framingham",
        "plays a crucial",
        "survival formally validating",
        "ihepscs ihepscs",
    }
    # how a study was run names no subtopic (the demo review asked about "HF-ACTION and randomized controlled trial")
    design = set(
        judged.phrases(
            "Effects of exercise training on health status: HF-ACTION randomized controlled trial"
        )
    )
    assert "health status" in design and not design & {
        "randomized controlled trial",
        "controlled trial",
        "trial",
    }


def test_two_names_that_hold_an_and_are_joined_so_the_question_reads() -> None:
    assert (
        judged.question_on(["nausea and vomiting", "tonsillectomy"])
        == "What do the studies find on nausea and vomiting, and on tonsillectomy?"
    )
    assert (
        judged.question_on(["focal adhesion", "mechanical force"])
        == "What do the studies find on focal adhesion and mechanical force?"
    )


def _finding(lead: Sentence) -> KeyFinding:
    return KeyFinding(
        "Q1-F1", SubQuestion("Q1", "What do the studies find on peak oxygen uptake?", "t"), lead
    )


def test_tags_follow_the_stance_of_other_papers_evidence() -> None:
    lead = _sentence(
        "corpus:1", "Exercise training raised peak oxygen uptake in heart failure patients.", 0.9
    )
    agrees = _sentence(
        "corpus:2", "Peak oxygen uptake in heart failure patients rose with exercise training.", 0.8
    )
    opposes = _sentence(
        "corpus:3",
        "Exercise training did not change peak oxygen uptake in heart failure patients.",
        0.7,
    )
    unrelated = _sentence(
        "corpus:4",
        "Depression scores of heart failure patients fell with counselling and exercise.",
        0.6,
    )
    stances = {
        ("raised peak oxygen", "rose with"): "SUPPORT",
        ("raised peak oxygen", "did not change"): "CONTRADICT",
    }
    judge = ScriptedJudge("", stances)  # every paper is about what the finding says

    alone = _finding(lead)
    judged.tag(judge, alone, [lead, unrelated])
    assert alone.tag.value == "INSUFFICIENT"

    supported = _finding(lead)
    judged.tag(judge, supported, [lead, agrees, unrelated])
    assert supported.tag.value == "SUPPORTED" and [
        s.paper.paper_id for s in supported.agreeing
    ] == ["corpus:2"]

    contested = _finding(lead)
    judged.tag(judge, contested, [lead, agrees, opposes])
    assert contested.tag.value == "CONTESTED" and [
        s.paper.paper_id for s in contested.opposing
    ] == ["corpus:3"]
    assert judged.stance_label(judge, lead.text, opposes.text, None) == "CONTRADICT"


def test_only_papers_on_the_findings_subject_take_a_side_and_a_trend_corroborates_nothing() -> None:
    # the demo review set a collaborative-care trial against HF-ACTION as a "debate": another
    # intervention's result neither corroborates nor contests a finding
    lead = _sentence(
        "corpus:1", "Exercise training raised peak oxygen uptake in heart failure patients.", 0.9
    )
    agrees = _sentence(
        "corpus:2", "Peak oxygen uptake in heart failure patients rose with exercise training.", 0.8
    )
    elsewhere = _sentence(
        "corpus:3",
        "Exercise training did not change peak oxygen uptake in heart failure patients.",
        0.7,
    )
    stances = {
        ("raised peak oxygen", "rose with"): "SUPPORT",
        ("raised peak oxygen", "did not change"): "CONTRADICT",
        ("raised peak oxygen", "trend toward"): "SUPPORT",
    }
    judge = ScriptedJudge(
        "oxygen", stances
    )  # corpus:3 ("Mortality in the exercise trial") is about something else
    finding = _finding(lead)
    judged.tag(judge, finding, [lead, agrees, elsewhere], floor=0.5)
    assert finding.tag.value == "SUPPORTED" and finding.opposing == []

    trend = _sentence(
        "corpus:2",
        "There was a trend toward higher peak oxygen uptake with exercise training (P = 0.12).",
        0.8,
    )
    alone = _finding(lead)
    judged.tag(judge, alone, [lead, trend], floor=0.5)
    assert alone.tag.value == "INSUFFICIENT" and alone.agreeing == []


def test_a_finding_another_already_quotes_as_corroboration_is_folded_into_it() -> None:
    # the demo review stated paper 2's conclusion as Q1's corroboration and again as Q2's lone finding
    lead = _sentence(
        "corpus:1", "Exercise training raised peak oxygen uptake in heart failure patients.", 0.9
    )
    agrees = _sentence(
        "corpus:2", "Peak oxygen uptake in heart failure patients rose with exercise training.", 0.8
    )
    other = _sentence(
        "corpus:4",
        "Depression scores of heart failure patients fell with counselling and exercise.",
        0.6,
    )
    q1, q2, q3 = (
        SubQuestion(f"Q{n}", f"What do the studies find on {t}?", "t")
        for n, t in ((1, "oxygen uptake"), (2, "training response"), (3, "depression"))
    )
    first = KeyFinding("Q1-F1", q1, lead, agreeing=[agrees])
    again = KeyFinding("Q2-F1", q2, agrees)
    third = KeyFinding("Q3-F1", q3, other)
    kept, questions = judged.fold_corroborations([first, again, third], [q1, q2, q3])
    assert [f.lead.text for f in kept] == [lead.text, other.text]
    assert [(q.id, q.text) for q in questions] == [
        ("Q1", q1.text),
        ("Q2", q3.text),
    ]  # numbered afresh
    assert [f.key for f in kept] == ["Q1-F1", "Q2-F1"] and kept[1].question.text == q3.text
    untouched = [KeyFinding("Q1-F1", q1, lead), KeyFinding("Q2-F1", q2, agrees)]
    assert judged.fold_corroborations(untouched, [q1, q2]) == (untouched, [q1, q2])
    # a sub-question no finding answers is not asked (the demo's "HF-ACTION and KCCQ score", whose
    # only paper Q1 already quoted, stood in the introduction and nowhere else)
    kept, questions = judged.fold_corroborations(
        [KeyFinding("Q1-F1", q1, lead), KeyFinding("Q3-F1", q3, other)], [q1, q2, q3]
    )
    assert [(q.id, q.text) for q in questions] == [("Q1", q1.text), ("Q2", q3.text)] and kept[
        1
    ].key == "Q2-F1"


def test_a_review_teaches_the_author_to_drop_off_topic_papers_and_contradicted_sides() -> None:
    review = PeerReview(
        issues=[
            Issue(
                severity=Severity.major,
                check=3,
                section="Key Findings",
                description="off",
                finding_id="f1",
                paper_id="corpus:9",
                kind="off_topic",
            ),
            Issue(
                severity=Severity.major,
                check=3,
                section="Key Findings",
                description="side",
                finding_id="f2",
                paper_id="corpus:7",
                kind="tag_contradicted",
            ),
        ]
    )
    exclusions = Exclusions()
    assert exclusions.learn(review) == {"papers": 1, "findings": 0, "debates": 0, "sides": 1}
    assert (
        exclusions.papers == {"corpus:9"}
        and exclusions.sides == {("f2", "corpus:7")}
        and not exclusions.findings
    )


def test_a_subtopic_whose_finding_quotes_two_papers_is_not_called_a_single_study() -> None:
    # the demo review's one SUPPORTED finding quotes two papers; its gap said "a single study speaks to Q1"
    from types import SimpleNamespace

    from research_reports import Finding, Quote
    from research_reviewer.author import Dossier
    from research_reviewer.compose import _gaps

    q1 = SubQuestion("Q1", "What do the studies find on citrullinated autoantigens?", "t")
    q2 = SubQuestion("Q2", "What do the studies find on histone?", "t")
    # `_gaps` reads only the dossier's clusters: a stand-in with those, typed as the dossier
    dossier = cast(
        Dossier,
        SimpleNamespace(clusters=[judged.Cluster(question=q1), judged.Cluster(question=q2)]),
    )
    two = Finding(
        statement="NETs externalise citrullinated autoantigens [1][2].",
        tag="SUPPORTED",
        group=q1.text,
        quotes=[Quote(reference_id=1, text="a"), Quote(reference_id=2, text="b")],
        citations=[1, 2],
    )
    one = Finding(
        statement="Antibodies target citrullinated H4 [3].",
        tag="INSUFFICIENT",
        group=q2.text,
        quotes=[Quote(reference_id=3, text="c")],
        citations=[3],
    )
    gaps, _ = _gaps(dossier, [two, one])
    assert gaps[0] == "- G1: a single study speaks to Q2 (histone)"
    gaps, _ = _gaps(
        dossier,
        [
            one,
            Finding(
                statement="NETs hold citrullinated antigens [4].",
                tag="INSUFFICIENT",
                group=q1.text,
                quotes=[Quote(reference_id=4, text="d")],
                citations=[4],
            ),
        ],
    )
    assert (
        gaps[0] == "- G1: a single study speaks to Q1 (citrullinated autoantigens) and Q2 (histone)"
    )


def test_a_review_or_commentary_gives_no_key_finding() -> None:
    # the demo's NET commentary: its sentences retell others' work ("Here, we critically evaluate …")
    commentary = PaperRecord(
        paper_id="corpus:14853989",
        title="Neutrophil extracellular chromatin traps connect innate immune "
        "response to autoimmunity",
        text=(
            "At the center of an infectious process, neutrophils exert various antimicrobial defenses, including the release "
            "of nuclear chromatin into the extracellular space. Here, we critically evaluate the evidence supporting NETs "
            "versus apoptotic bodies as a source for nuclear antigens in autoimmunity."
        ),
    )
    study = PaperRecord(
        paper_id="corpus:1",
        title="NETs in rheumatoid arthritis",
        text=(
            "During NETosis, neutrophils externalized the citrullinated autoantigens implicated in RA pathogenesis."
        ),
    )
    assert sentences_of(commentary) == []
    assert sentences_of(study) == [study.text]
