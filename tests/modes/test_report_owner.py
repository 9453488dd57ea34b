"""Reports have one owner: the lifecycle vocabulary is `research_ledger.ReportStatus` (the gateway's
query/response literal says the same states), and the tag mix of a version is computed by the report
itself (the reviewer stores it, the gateway's versions route shows it)."""

from __future__ import annotations

from typing import get_args

import pytest

from research_gateway.reviews import ReportState
from research_ledger import ReportStatus
from research_ledger.status import REFRESHABLE_REPORT_STATES
from research_reports import Report
from research_reports.model import Finding, Section

pytestmark = pytest.mark.unit


def test_the_gateway_names_the_same_report_states_as_the_ledger() -> None:
    assert set(get_args(ReportState)) == {s.value for s in ReportStatus}
    assert ReportStatus.running not in REFRESHABLE_REPORT_STATES, (
        "a running report is not refreshed under itself"
    )


def test_the_tag_mix_counts_findings_not_their_sub_findings() -> None:
    report = Report(
        title="t",
        sections=[
            Section(
                title="Key Findings",
                findings=[
                    Finding(id="f1", statement="a", tag="SUPPORTED"),
                    Finding(id="f1:1", statement="a.1", tag="SUPPORTED"),
                    Finding(id="f2", statement="b", tag="CONTESTED"),
                    Finding(id="f3", statement="c", tag="SUPPORTED"),
                    Finding(id="f4", statement="d"),
                ],
            ),
            Section(
                title="Evidence", findings=[Finding(id="e1", statement="e", tag="INSUFFICIENT")]
            ),
        ],
    )
    assert report.tag_counts() == {"SUPPORTED": 2, "CONTESTED": 1, "INSUFFICIENT": 1}
    assert Report(title="empty").tag_counts() == {}
