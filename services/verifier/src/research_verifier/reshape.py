"""Reshape: step 5 — the six-section verification report, passed through the citation checker.

Claim Under Review (the claim, its statements and `Verdict: … · Confidence: …` on one line) ·
Corroborating Evidence · Contradicting Evidence · Nuances and Conditions (each a finding per
source: the sentence it rests on, quoted verbatim, with its `[N]` marker; a qualifying one names
the population, dose or setting it holds under) · Confidence Assessment (the strongest quoted
passage of each side the verdict rests on, then the counts, coverage and strength) · References.

Every report goes through `research_reports.check_report`. A finding whose quote is not in its
source, or that cites no known reference (an LLM that invents a paper), is dropped and the
verdict is decided again without it, so the headline never rests on evidence the checker refused.

A re-verification whose verdict moved (`experiment.change`) is shaped as a finding (`finding`).
"""

from __future__ import annotations

from research_ledger.findings import NewFinding
from research_reports import CitationCheck, Finding, Quote, Reference, Report, Section, check_report
from research_reports.text import statement_of
from research_verification import Assessment, LabelledPassage, PassageStance, decide_verdict
from research_verifier.experiment import VerdictChange
from research_verifier.prepare import VerificationJob
from research_verifier.tools import Passage

SECTIONS = (
    "Claim Under Review",
    "Corroborating Evidence",
    "Contradicting Evidence",
    "Nuances and Conditions",
    "Confidence Assessment",
)
NOT_COUNTED = "Closest Evidence (not counted)"  # sits before the Confidence Assessment
SIDES = {
    PassageStance.SUPPORTS: SECTIONS[1],
    PassageStance.CONTRADICTS: SECTIONS[2],
    PassageStance.QUALIFIES: SECTIONS[3],
}


def _reference(passage: Passage) -> Reference:
    return Reference(
        id=1,
        title=passage.title or passage.paper_id,
        authors=list(passage.authors),
        year=passage.year,
        venue=passage.venue,
        doi=passage.doi,
        url=passage.url,
        paper_id=passage.paper_id,
        source_text=passage.text,
    )


def nothing_found(
    job: VerificationJob,
    searches: int,
    retrieved: int,
    closest: tuple[Passage, LabelledPassage] | None,
    bar: float | None,
) -> str:
    """Why a verification cites nothing: what was searched, how much was read, the nearest miss."""
    queries = [q for s in job.statements for q in s.queries][:searches]
    shown = "; ".join(f"“{q}”" for q in queries[:4]) + (
        f" and {len(queries) - 4} more" if len(queries) > 4 else ""
    )
    line = (
        f"- Nothing found that takes a stance: {searches} searches ({shown}) retrieved {retrieved} papers, "
        f"each read whole against the claim."
    )
    if closest is not None:
        paper, near = closest
        year = f", {paper.year}" if paper.year else ""
        name = f"“{(paper.title or paper.paper_id).rstrip('. ')}”{year}"
        if near.leaning:
            line += (
                f" The closest was {name}: it leans {near.leaning} (P {near.strength:.2f}) but does not "
                f"count — {near.reason}."
            )
        else:
            short = f", under the {bar:.2f} a paper needs to count" if bar is not None else ""
            line += f" The closest was {name}: P(evidence on the claim) {near.strength:.2f}{short}."
    elif not retrieved:
        line += " No paper in the corpus matched the searches."
    return line


def _not_counted(
    job: VerificationJob,
    report: Report,
    near: list[LabelledPassage],
    passages: dict[str, Passage],
    quotes_per_side: int,
) -> Section:
    """Quotes that leaned one way but missed their bar: the paper, its probability, the bar and why."""
    findings = []
    for p in near[:quotes_per_side]:
        passage = passages.get(p.source_id)
        if passage is None or not p.text:
            continue
        ref = report.add_reference(_reference(passage))
        statement = (
            job.statements[p.statement].text if p.statement < len(job.statements) else job.claim
        )
        findings.append(
            Finding(
                id=f"closest:{p.source_id}:{p.statement}",
                statement=statement_of(p.text),
                tag="NOT COUNTED",
                citations=[ref],
                group=(
                    f"Statement {p.statement + 1}: {statement} — leans {p.leaning}, "
                    f"P {p.strength:.2f}, bar {p.bar:.2f}: {p.reason}"
                ),
                quotes=[
                    Quote(
                        reference_id=ref,
                        text=p.text,
                        locator=f"not counted: P({p.leaning}) {p.strength:.2f}, bar {p.bar:.2f}",
                    )
                ],
            )
        )
    return Section(
        title=NOT_COUNTED,
        findings=findings,
        body="" if findings else "No paper leaned either way without counting.",
    )


def compose(
    job: VerificationJob,
    chosen: list[LabelledPassage],
    passages: dict[str, Passage],
    assessment: Assessment,
    *,
    engine: str,
    searches: int,
    quotes_per_side: int,
    why_nothing: str = "",
    not_counted: list[LabelledPassage] | None = None,
) -> Report:
    report = Report(
        title=f"Claim verification: {job.claim[:200]}",
        kind="verification",
        metadata={
            "engine": engine,
            "claim": job.claim,
            "run_id": job.run_id,
            "sources": job.sources,
            "verdict": str(assessment.verdict),
            "confidence": str(assessment.confidence),
            "statements": [s.text for s in job.statements],
        },
    )
    findings: dict[str, list[Finding]] = {title: [] for title in SIDES.values()}
    for p in sorted(
        chosen, key=lambda p: -p.strength
    ):  # each side's strongest evidence first (and kept when capped)
        # A source no search returned (an LLM's invention) gets a reference without text: the checker refuses it.
        passage = passages.get(p.source_id) or Passage(p.source_id, p.source_id, "")
        title = SIDES.get(p.label)
        if title is None or len(findings[title]) >= quotes_per_side:
            continue
        ref = report.add_reference(_reference(passage))
        statement = (
            job.statements[p.statement].text if p.statement < len(job.statements) else job.claim
        )
        group = f"Statement {p.statement + 1}: {statement}"
        if p.conditions:  # what the evidence holds under, in its own words
            group += f" — holds {'; '.join(p.conditions)}"
        findings[title].append(
            Finding(
                id=f"{p.source_id}:{p.statement}",
                statement=statement_of(p.text),
                tag=str(p.label),
                citations=[ref],
                group=group,
                quotes=[Quote(reference_id=ref, text=p.text, locator=f"strength {p.strength:.2f}")],
            )
        )
    claim_lines = [
        assessment.headline,
        "",
        f"Claim: {job.claim}",
        "",
        f"Tested as {len(job.statements)} statement(s):",
    ]
    claim_lines += [f"- S{i + 1}: {s.text}" for i, s in enumerate(job.statements)]
    empty = {
        SECTIONS[1]: "No retrieved passage supports the claim.",
        SECTIONS[2]: "No retrieved passage contradicts the claim.",
        SECTIONS[
            3
        ]: "No retrieved passage states a population, dose or setting the claim does not name.",
    }
    report.sections = [
        Section(title=SECTIONS[0], body="\n".join(claim_lines), requires_citations=False)
    ]
    for title in SECTIONS[1:4]:
        report.sections.append(
            Section(
                title=title, findings=findings[title], body="" if findings[title] else empty[title]
            )
        )
    report.sections.append(_not_counted(job, report, not_counted or [], passages, quotes_per_side))
    body = _assessment(assessment, findings, report, searches, len(passages))
    if why_nothing and not any(findings.values()):
        body = f"{why_nothing}\n{body}"
        report.metadata["nothing_found"] = why_nothing.removeprefix("- ")
    report.sections.append(Section(title=SECTIONS[4], body=body, requires_citations=False))
    return report


def _assessment(
    a: Assessment, findings: dict[str, list[Finding]], report: Report, searches: int, retrieved: int
) -> str:
    """What the verdict rests on — the strongest quoted passage of each side — and the counts behind it."""
    lines = []
    for title, verb in (
        (SECTIONS[1], "Supported by"),
        (SECTIONS[2], "Contradicted by"),
        (SECTIONS[3], "Qualified by"),
    ):
        if findings[title]:
            best = findings[title][0]
            ref = next(r for r in report.references if r.id == best.citations[0])
            year = f", {ref.year}" if ref.year else ""
            lines.append(
                f"- {verb} {ref.title.rstrip('. ')}{year}: {best.quotes[0].text}"
            )  # no "trial.: …"
    lines += [
        (
            f"- Sources with a stance: {a.supporting_sources} supporting, {a.contradicting_sources} contradicting, "
            f"{a.qualifying_sources} qualifying (of {retrieved} retrieved by {searches} searches)."
        ),
        (
            f"- Coverage: {a.coverage:.0%} of the claim's statements have evidence with a stance; "
            f"mean stance strength {a.mean_strength:.2f}, support share {a.support_share:.2f}."
        ),
    ]
    return "\n".join(lines)


def checked(
    job: VerificationJob,
    chosen: list[LabelledPassage],
    passages: dict[str, Passage],
    *,
    engine: str,
    searches: int,
    quotes_per_side: int,
    why_nothing: str = "",
    not_counted: list[LabelledPassage] | None = None,
) -> tuple[Report, Assessment, CitationCheck, int]:
    """The report that passed the checker, its (re-decided) assessment, the check and how many findings were dropped."""

    def decided(cited: list[LabelledPassage]) -> tuple[Report, Assessment]:
        assessment = decide_verdict(cited, len(job.statements))
        report = compose(
            job,
            cited,
            passages,
            assessment,
            engine=engine,
            searches=searches,
            quotes_per_side=quotes_per_side,
            why_nothing=why_nothing,
            not_counted=not_counted,
        )
        return report, assessment

    report, assessment = decided(chosen)
    check = check_report(report)
    refused = {
        issue.finding_id
        for issue in check.issues
        if issue.finding_id and issue.kind in ("unknown_id", "unsupported")
    }
    if not refused:
        return report, assessment, check, 0
    kept = [p for p in chosen if f"{p.source_id}:{p.statement}" not in refused]
    report, assessment = decided(kept)
    return report, assessment, check_report(report), len(chosen) - len(kept)


def finding(job: VerificationJob, moved: VerdictChange) -> NewFinding:
    """The finding of a changed re-verification; it names the verification (its report id)."""
    return NewFinding(
        kind=moved.kind,
        claim_ids=[job.verification_id],
        payload={
            "verification_id": str(job.verification_id),
            "claim": job.stored_claim(),
            "run_id": job.run_id,
            **moved.payload(),
        },
    )
