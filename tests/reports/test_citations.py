"""The citation checker's three failure kinds (seed 003), on a structured report and on the
Markdown an LLM would write, and a clean report that passes."""

from __future__ import annotations

import json

import pytest

from research_reports import CitationCheck, Finding, IssueKind, Quote, check_markdown, check_report
from tests.reports.sample import references, review

pytestmark = pytest.mark.unit


def test_a_grounded_review_passes_with_full_accuracy_and_grounding() -> None:
    check = check_report(review())
    assert check.issues == [], [i.model_dump() for i in check.issues]
    assert check.citation_accuracy == 1.0 and check.grounding == 1.0
    assert check.quotes == 2 and check.verbatim_quotes == 2
    assert (
        check.factual_sentences == 1
    )  # "18% … aged 65": the landscape's counts are computed, not cited
    assert not check.blocking


def test_unknown_marker_is_blocking() -> None:
    report = review()
    report.sections[3].body += " A later cohort confirmed the benefit [7]."
    check = check_report(report)
    assert check.unknown_ids == [7] and check.blocking
    assert [i.kind for i in check.issues if i.reference_id == 7] == [IssueKind.unknown_id]


def test_quote_from_an_unknown_reference_is_blocking() -> None:
    report = review()
    report.sections[2].findings[0].quotes.append(Quote(reference_id=9, text="anything"))
    assert check_report(report).unknown_ids == [9]


def test_citation_to_a_source_about_something_else_is_unsupported() -> None:
    report = review()
    report.sections[2].findings.append(
        Finding(
            statement="Exercise programmes improved balance and gait speed in frail elderly participants.",
            citations=[3],
            tag="INSUFFICIENT",
        )
    )
    check = check_report(report)
    issue = next(i for i in check.issues if i.kind == IssueKind.unsupported)
    assert (
        issue.reason == "low_overlap"
        and issue.reference_id == 3
        and issue.overlap is not None
        and issue.overlap < 0.3
    )
    assert check.citation_accuracy < 1.0


def test_a_number_the_source_does_not_state_is_unsupported() -> None:
    report = review()
    report.sections[2].findings[
        0
    ].statement = (
        "Vitamin D supplementation reduced hip fracture risk by 35% in adults aged 65 or older."
    )
    check = check_report(report)
    issue = next(i for i in check.issues if i.reason == "number_not_in_source")
    assert "35%" in issue.detail and issue.finding_id == "hip"


def test_a_quote_that_is_not_verbatim_is_unsupported() -> None:
    report = review()
    report.sections[2].findings[1].quotes[0].text = "Vitamin D on its own never prevents fractures"
    check = check_report(report)
    issue = next(i for i in check.issues if i.reason == "quote_not_verbatim")
    assert issue.reference_id == 2 and issue.finding_id == "alone"
    assert check.verbatim_quotes == 1


def test_quotes_match_across_typography_and_ellipses() -> None:
    report = review()
    report.sections[2].findings[0].quotes[
        0
    ].text = "In a randomised trial of 2,400 adults … reduced hip fracture risk by 18%"
    assert check_report(report).issues == []


@pytest.mark.parametrize(
    ("sentence", "signal"),
    [
        ("Fracture rates fell by 12% after supplementation.", "number 12%"),
        ("The largest trial was published in 2019.", "year 2019"),
        ("Supplementation was first studied at Harvard by several groups.", "entity Harvard"),
    ],
)
def test_factual_sentence_without_a_marker_is_uncited(sentence: str, signal: str) -> None:
    report = review()
    report.sections[0].body += " " + sentence
    check = check_report(report)
    uncited = [i for i in check.issues if i.kind == IssueKind.uncited]
    assert (
        len(uncited) == 1 and signal in uncited[0].detail and uncited[0].section == "Introduction"
    )
    assert check.grounding < 1.0


def test_computed_sections_are_not_asked_for_markers_but_prose_sections_are() -> None:
    report = review()
    report.sections[1].requires_citations = True
    check = check_report(report)
    assert [i.section for i in check.issues if i.kind == IssueKind.uncited] == [
        "Research Landscape"
    ]


def test_check_markdown_agrees_with_check_report_on_the_rendered_report() -> None:
    report = review()
    report.sections[2].findings[1].quotes[0].text = "Vitamin D on its own never prevents fractures"
    report.sections[3].body += " A later cohort confirmed the benefit [7]."
    report.sections[0].body += " The largest trial was published in 2019."
    markdown = report.render_markdown()
    from_markdown = check_markdown(markdown, references(), exempt_sections=["Research Landscape"])
    from_report = check_report(report)
    assert from_markdown.unknown_ids == from_report.unknown_ids == [7]
    assert sorted(i.reason for i in from_markdown.issues) == sorted(
        i.reason for i in from_report.issues
    )
    assert from_markdown.quotes == from_report.quotes


def test_text_after_the_references_heading_is_not_checked() -> None:
    markdown = "## Findings\n\nVitamin D supplementation reduced hip fracture risk by 18% [1].\n\n## References\n\n[1] Smith J (2019). Vitamin D in 2019.\n"
    check = check_markdown(markdown, references())
    assert check.issues == [] and check.sentences == 1


def test_abbreviations_and_markers_after_the_full_stop_stay_in_their_sentence() -> None:
    markdown = "Smith et al. found that vitamin D supplementation reduced hip fracture risk by 18% over three years. [1] Adherence was high in both arms [1]."
    check = check_markdown(markdown, references())
    assert check.sentences == 2 and check.issues == []


def test_the_check_is_json_serialisable_with_its_counts() -> None:
    report = review()
    report.sections[3].body += " A later cohort confirmed the benefit [7]."
    data = json.loads(check_report(report).model_dump_json())
    assert (
        data["blocking"] is True
        and data["unknown"] == 1
        and data["unsupported"] == 0
        and data["uncited"] == 0
    )
    assert {"citation_accuracy", "grounding", "issues", "citations", "quotes"} <= data.keys()
    assert CitationCheck.model_validate(data).unknown_ids == [7]
