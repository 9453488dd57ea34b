"""What an LLM author may write that the reviewer never shows: a reference the tools never
returned, a quote not found verbatim in its source (both dropped and counted)."""

from __future__ import annotations

import pytest

from research_contracts.corpus_tools import PaperRecord
from research_reports import Finding, Quote, Reference, Report, Section
from research_reviewer.reshape import conform

pytestmark = pytest.mark.unit
TEXT = "Exercise training improved the quality of life of patients with heart failure in a randomised trial."


def _report() -> Report:
    return Report(
        title="t",
        sections=[
            Section(
                title="Key Findings",
                findings=[
                    Finding(
                        statement="Exercise training improved quality of life [1].",
                        tag="INSUFFICIENT",
                        citations=[1],
                        quotes=[Quote(reference_id=1, text=TEXT)],
                    ),
                    Finding(
                        statement="Exercise cured heart failure [1].",
                        tag="INSUFFICIENT",
                        citations=[1],
                        quotes=[
                            Quote(
                                reference_id=1,
                                text="Exercise cured heart failure in every patient.",
                            )
                        ],
                    ),
                    Finding(
                        statement="A famous trial showed the opposite [2].",
                        tag="INSUFFICIENT",
                        citations=[2],
                        quotes=[Quote(reference_id=2, text="The opposite was shown.")],
                    ),
                ],
            )
        ],
        references=[
            Reference(id=1, title="Trial", paper_id="corpus:1", source_text=TEXT),
            Reference(
                id=2,
                title="A paper the model made up",
                paper_id="corpus:424242",
                source_text="The opposite was shown.",
            ),
        ],
    )


def test_fabricated_reference_and_quote_are_dropped_and_counted() -> None:
    out = conform(
        _report(), {"corpus:1": PaperRecord(paper_id="corpus:1", title="Trial", text=TEXT)}
    )
    assert out.counts() == {"dropped_references": 1, "dropped_quotes": 1, "dropped_findings": 2}
    assert [r.paper_id for r in out.report.references] == ["corpus:1"]
    assert [f.statement for f in out.report.findings()] == [
        "Exercise training improved quality of life [1]."
    ]


def test_an_honest_report_is_unchanged() -> None:
    report = _report()
    known = {p: PaperRecord(paper_id=p, title=p, text="") for p in ("corpus:1", "corpus:424242")}
    key_findings = report.section("Key Findings")
    assert key_findings is not None
    key_findings.findings.pop(1)
    out = conform(report, known)
    assert out.counts() == {"dropped_references": 0, "dropped_quotes": 0, "dropped_findings": 0}
    assert out.report == report
