"""The report renders to Markdown whose `[N]` markers resolve to its References, keeps one
number per source, and two versions diff by identity rather than by numbering."""

from __future__ import annotations

import re

import pytest

from research_reports import Finding, Reference, Report, diff_reports
from tests.reports.sample import review

pytestmark = pytest.mark.unit


def test_every_marker_in_the_markdown_resolves_to_a_numbered_reference() -> None:
    markdown = review().render_markdown()
    body, references = markdown.split("## 7. References")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    listed = {int(n) for n in re.findall(r"^\[(\d+)\] ", references, flags=re.MULTILINE)}
    assert cited == listed == {1, 2, 3}
    assert (
        "[1] Smith, John; Müller, Anna (2019). Vitamin D and hip fracture: a randomised trial. *The Lancet*."
        in references
    )
    assert "paper id: `pmid:28000001`" in references


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("corpus:40817021", None),  # the local corpus's own id: no link, the paper id says it
        ("https://example.org/paper/7", "<https://example.org/paper/7>."),
        ("javascript:alert(1)", None),
    ],
)
def test_a_reference_links_only_a_web_address(url: str, shown: str | None) -> None:
    line = Reference(id=1, title="A trial", url=url, paper_id="corpus:40817021").render()
    assert line.endswith("paper id: `corpus:40817021`")
    assert ("<" in line) == (shown is not None) and (shown is None or shown in line)


def test_sections_are_numbered_in_order_and_findings_carry_tag_markers_and_quotes() -> None:
    markdown = review().render_markdown()
    headings = re.findall(r"^## (\d+)\. (.+)$", markdown, flags=re.MULTILINE)
    assert [t for _, t in headings] == [
        "Introduction",
        "Research Landscape",
        "Key Findings",
        "Contradictions and Debates",
        "Research Gaps",
        "Suggested Future Research Directions",
        "References",
    ]
    assert (
        "- **[SUPPORTED]** Vitamin D supplementation reduced hip fracture risk by 18% in adults aged 65 or older [1][3]."
        in markdown
    )
    assert (
        '  - > "vitamin D supplementation reduced hip fracture risk by 18% over three years" [1]'
        in markdown
    )
    assert "### Fracture outcomes" in markdown


def test_add_reference_keeps_one_number_per_source() -> None:
    report = Report(title="t")
    first = report.add_reference({"title": "A trial", "doi": "10.1/abc", "source_text": "one"})
    again = report.add_reference(
        {
            "title": "A trial (preprint title)",
            "doi": "https://doi.org/10.1/ABC",
            "source_text": "two",
        }
    )
    other = report.add_reference(Reference(id=99, title="Another trial", paper_id="corpus:5"))
    assert (first, again, other) == (1, 1, 2)
    first_reference = report.reference(1)
    assert first_reference is not None and first_reference.source_text == "one\ntwo"
    assert [r.id for r in report.references] == [1, 2]


def test_section_lookup_ignores_numbering_and_case() -> None:
    section = review().section("3. key findings")
    assert section is not None and section.title == "Key Findings"


def test_finding_key_is_stable_across_markers_and_case() -> None:
    a = Finding(statement="Vitamin D lowers fracture risk [1].")
    b = Finding(statement="vitamin D lowers fracture risk [2, 3]")
    assert a.key() == b.key() and a.key().startswith("f-")


def test_diff_lists_added_removed_retagged_findings_and_reference_changes() -> None:
    old = review()
    new = review()
    new.version = 2
    key_findings = new.section("Key Findings")
    assert key_findings is not None
    findings = key_findings.findings
    findings[1].tag = "SUPPORTED"  # re-tagged
    findings.pop(0)  # removed: "hip"
    findings.append(
        Finding(
            id="men",
            statement="Men benefit less than women [4].",
            tag="INSUFFICIENT",
            citations=[4],
        )
    )
    new.references = [r for r in new.references if r.id != 1]  # Smith dropped
    for ref in new.references:
        ref.id -= 1  # renumbering alone is not a change
    new.references.append(
        Reference(
            id=3, title="Sex differences in vitamin D response", year=2022, paper_id="corpus:88"
        )
    )
    diff = diff_reports(old, new)
    assert diff.changed and (diff.old_version, diff.new_version) == (1, 2)
    assert [f.key for f in diff.findings_added] == ["men"]
    assert [f.key for f in diff.findings_removed] == ["hip"]
    assert [(c.key, c.old_tag, c.new_tag) for c in diff.findings_retagged] == [
        ("alone", "CONTESTED", "SUPPORTED")
    ]
    assert [r.paper_id for r in diff.references_added] == ["corpus:88"]
    assert [r.paper_id for r in diff.references_dropped] == ["corpus:11"]
    summary = diff.render_markdown()
    assert (
        "CONTESTED → SUPPORTED" in summary
        and "Sex differences in vitamin D response (2022)" in summary
    )


def test_identical_versions_do_not_differ() -> None:
    diff = diff_reports(review(), review())
    assert not diff.changed and "No changes." in diff.render_markdown()
