"""The peer review's output, structured: seed 000's VERDICT / ISSUES / MISSED_PAPERS / SUMMARY.

The verdict rule lives here and only here: any CRITICAL issue, or one MAJOR issue or more →
REVISION_NEEDED; only MINOR issues, or none → PASS. Issues name what they are about
(`finding_id`, `paper_id`, `reference_id`) so the author can act on them without parsing prose.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, TypedDict, Unpack

from pydantic import BaseModel, Field, computed_field


class Severity(StrEnum):
    critical = "CRITICAL"
    major = "MAJOR"
    minor = "MINOR"


CHECKS = {
    1: "structural completeness",
    2: "reference verification",
    3: "confidence tag audit",
    4: "evidence spot-check",
    5: "coverage gap analysis",
    6: "contradiction validation",
    7: "gap-direction alignment",
}


class Issue(BaseModel):
    severity: Severity
    check: int = Field(ge=1, le=7, description="Which of the seven checks raised it.")
    section: str
    description: str
    evidence: str = ""
    kind: Literal["off_topic", "tag_contradicted"] | None = Field(
        default=None,
        description="A trained-judgement finding of check 3: the finding's paper is off the topic "
        "(relevance model), or a quoted side does not take the side its tag says (stance model).",
    )
    finding_id: str | None = None
    paper_id: str | None = None
    reference_id: int | None = None


class IssueAbout(TypedDict, total=False):
    """What an issue names besides its check and section: its evidence, and what it is about."""

    evidence: str
    kind: Literal["off_topic", "tag_contradicted"] | None
    finding_id: str | None
    paper_id: str | None
    reference_id: int | None


class MissedPaper(BaseModel):
    paper_id: str
    title: str
    citations: int | None = None
    reason: str


class PeerReview(BaseModel):
    """One round's review of one draft."""

    iteration: int = 1
    issues: list[Issue] = Field(default_factory=list)
    missed_papers: list[MissedPaper] = Field(default_factory=list)
    summary: str = ""
    checks: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per check: what was looked at, what failed."
    )
    model: str = "offline-peer-reviewer-v1"

    def flag(
        self,
        severity: Severity,
        check: int,
        section: str,
        description: str,
        **about: Unpack[IssueAbout],
    ) -> None:
        """Record an issue that check `check` found in `section`."""
        self.issues.append(
            Issue(severity=severity, check=check, section=section, description=description, **about)
        )

    def count(self, severity: Severity) -> int:
        return sum(1 for issue in self.issues if issue.severity is severity)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def verdict(self) -> Literal["PASS", "REVISION_NEEDED"]:
        blocking = self.count(Severity.critical) or self.count(Severity.major)
        return "REVISION_NEEDED" if blocking else "PASS"

    def counts(self) -> dict[str, int]:
        return {s.value.lower(): self.count(s) for s in Severity}

    def render(self) -> str:
        """The seed's plain-text review form."""
        lines = [f"VERDICT: {self.verdict}", "", "ISSUES:"]
        for issue in self.issues:
            lines.append(f"- [{issue.severity.value}] {issue.section}: {issue.description}")
            if issue.evidence:
                lines.append(f"  Evidence: {issue.evidence}")
        if not self.issues:
            lines.append("- none")
        lines += ["", "MISSED_PAPERS:"]
        for paper in self.missed_papers:
            count = paper.citations if paper.citations is not None else "n/a"
            lines.append(
                f"- {paper.title} (paper_id: {paper.paper_id}, citations: {count}) — relevant because: {paper.reason}"
            )
        if not self.missed_papers:
            lines.append("- none")
        lines += ["", "SUMMARY:", self.summary]
        return "\n".join(lines) + "\n"


def summarise(review: PeerReview, findings: int, references: int) -> str:
    """A 2–3 sentence assessment in the seed's spirit."""
    counts = review.counts()
    head = (
        f"The draft states {findings} key finding(s) over {references} reference(s); "
        f"the seven checks raised {counts['critical']} critical, {counts['major']} major and {counts['minor']} minor issue(s)."
    )
    if review.verdict == "PASS":
        return (
            head
            + " Every reference resolved in the corpus and every spot-checked finding was found again, so it passes."
        )
    return (
        head + " The author must address the critical and major issues before the report can pass."
    )
