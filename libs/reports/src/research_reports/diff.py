"""What changed between two versions of a report — the "living" part of a living review, and
the new / dropped part of a scheduled source list.

Findings are matched by `Finding.key()` (an explicit id, else the normalised statement) and
references by `Reference.key()` (DOI, else paper id, else normalised title), so renumbering the
References section between versions is not reported as a change.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, computed_field

from research_reports.model import Finding, Reference, Report


class FindingChange(BaseModel):
    """A finding present in both versions whose tag changed (SUPPORTED → CONTESTED, …)."""

    key: str
    statement: str
    old_tag: str | None
    new_tag: str | None


class ReferenceEntry(BaseModel):
    """A reference as the diff shows it (its number in the version it belongs to)."""

    key: str
    id: int
    title: str
    year: int | None = None
    paper_id: str | None = None
    doi: str | None = None


class FindingEntry(BaseModel):
    key: str
    statement: str
    tag: str | None = None
    claim_id: str | None = None


class ReportDiff(BaseModel):
    """Findings added / removed / re-tagged and references added / dropped, old → new."""

    old_version: int
    new_version: int
    findings_added: list[FindingEntry] = Field(default_factory=list)
    findings_removed: list[FindingEntry] = Field(default_factory=list)
    findings_retagged: list[FindingChange] = Field(default_factory=list)
    references_added: list[ReferenceEntry] = Field(default_factory=list)
    references_dropped: list[ReferenceEntry] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def changed(self) -> bool:
        return bool(
            self.findings_added
            or self.findings_removed
            or self.findings_retagged
            or self.references_added
            or self.references_dropped
        )

    def render_markdown(self) -> str:
        """A short human summary, e.g. for the refresh run's `result` event or a changelog."""
        lines = [f"## Changes from version {self.old_version} to {self.new_version}", ""]
        if not self.changed:
            return "\n".join([*lines, "No changes.", ""])
        for label, items in (
            ("Findings added", self.findings_added),
            ("Findings removed", self.findings_removed),
        ):
            if items:
                lines += [f"**{label}**", *[f"- [{f.tag or '-'}] {f.statement}" for f in items], ""]
        if self.findings_retagged:
            lines += ["**Findings re-tagged**"]
            lines += [
                f"- {c.statement}: {c.old_tag or '-'} → {c.new_tag or '-'}"
                for c in self.findings_retagged
            ] + [""]
        for label, refs in (
            ("References added", self.references_added),
            ("References dropped", self.references_dropped),
        ):
            if refs:
                lines += [
                    f"**{label}**",
                    *[f"- {r.title}" + (f" ({r.year})" if r.year else "") for r in refs],
                    "",
                ]
        return "\n".join(lines)


def _finding_entry(finding: Finding) -> FindingEntry:
    return FindingEntry(
        key=finding.key(), statement=finding.statement, tag=finding.tag, claim_id=finding.claim_id
    )


def _reference_entry(reference: Reference) -> ReferenceEntry:
    return ReferenceEntry(
        key=reference.key(),
        id=reference.id,
        title=reference.title,
        year=reference.year,
        paper_id=reference.paper_id,
        doi=reference.doi,
    )


def diff_findings(
    old: list[Finding], new: list[Finding]
) -> tuple[list[FindingEntry], list[FindingEntry], list[FindingChange]]:
    """(added, removed, re-tagged) between two lists of findings, in the order they appear."""
    before = {f.key(): f for f in old}
    after = {f.key(): f for f in new}
    added = [_finding_entry(f) for k, f in after.items() if k not in before]
    removed = [_finding_entry(f) for k, f in before.items() if k not in after]
    retagged = [
        FindingChange(key=k, statement=f.statement, old_tag=before[k].tag, new_tag=f.tag)
        for k, f in after.items()
        if k in before and before[k].tag != f.tag
    ]
    return added, removed, retagged


def diff_references(
    old: list[Reference], new: list[Reference]
) -> tuple[list[ReferenceEntry], list[ReferenceEntry]]:
    """(added, dropped) between two reference lists, matched by identity, not by number."""
    before = {r.key(): r for r in old}
    after = {r.key(): r for r in new}
    added = [_reference_entry(r) for k, r in after.items() if k not in before]
    dropped = [_reference_entry(r) for k, r in before.items() if k not in after]
    return added, dropped


def diff_reports(old: Report, new: Report) -> ReportDiff:
    """The diff a refresh stores next to the new version."""
    added, removed, retagged = diff_findings(old.findings(), new.findings())
    refs_added, refs_dropped = diff_references(old.references, new.references)
    return ReportDiff(
        old_version=old.version,
        new_version=new.version,
        findings_added=added,
        findings_removed=removed,
        findings_retagged=retagged,
        references_added=refs_added,
        references_dropped=refs_dropped,
    )
