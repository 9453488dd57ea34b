"""Step 6 of the author: the seven-section report, written from the dossier.

Introduction · Research Landscape (corpus statistics) · Key Findings (grouped by sub-question,
tagged, cited, with the exact quotes) · Contradictions and Debates (both sides quoted) ·
Research Gaps · Suggested Future Research Directions (each tied to a gap) · References.

Introduction, Research Landscape, Research Gaps and Future Directions are computed from the
request, the corpus statistics and the review's own evidence counts, so they are marked
`requires_citations=False` (their markers are still checked); every statement taken from the
literature sits in Key Findings or Contradictions with a `[N]` marker and a verbatim quote.
`Exclusions` is what a peer review taught the author: papers, findings and debates to leave out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from research_contracts.corpus_tools import PaperRecord
from research_reports import Finding, Quote, Reference, Report, Section
from research_reviewer import evidence
from research_reviewer.critique import PeerReview

if TYPE_CHECKING:
    from research_reviewer.author import Dossier

SECTIONS = (
    "Introduction",
    "Research Landscape",
    "Key Findings",
    "Contradictions and Debates",
    "Research Gaps",
    "Suggested Future Research Directions",
)


@dataclass
class Exclusions:
    papers: set[str] = field(default_factory=set)
    findings: set[str] = field(default_factory=set)
    debates: set[str] = field(default_factory=set)

    def learn(self, review: PeerReview) -> dict[str, int]:
        """Take in a review's issues: refused references (check 2), unverifiable or unsupported
        findings (checks 3–4, citation checker), false contradictions (check 6)."""
        before = (len(self.papers), len(self.findings), len(self.debates))
        for issue in review.issues:
            if issue.check == 6 and issue.finding_id:
                self.debates.add(issue.finding_id.split(":")[0])
            elif issue.paper_id and issue.check == 2:
                self.papers.add(issue.paper_id)
            elif issue.finding_id and issue.severity.value != "MINOR":
                self.findings.add(issue.finding_id.split(":")[0])
        after = (len(self.papers), len(self.findings), len(self.debates))
        return {"papers": after[0] - before[0], "findings": after[1] - before[1], "debates": after[2] - before[2]}


def finding_id(statement: str) -> str:
    return Finding(statement=statement).key()


def reference_of(paper: PaperRecord) -> Reference:
    return Reference(
        id=1, title=paper.title or paper.paper_id, authors=paper.authors, year=paper.year, venue=paper.venue,
        doi=paper.doi, paper_id=paper.paper_id, source_text=evidence.source_text(paper),
    )


def compose(dossier: Dossier, *, model: str) -> Report:
    job, excl = dossier.job, dossier.exclusions
    report = Report(title=f"Literature review: {job.topic}", kind="review", metadata={
        "engine": "offline" if model.startswith("offline") else "llm", "model": model, "topic": job.topic,
        "topic_key": job.topic_key, "run_id": job.run_id, "sources": job.sources,
        "questions": [{"id": q.id, "question": q.text} for q in dossier.questions],
    })
    cite = lambda paper: report.add_reference(reference_of(paper))  # noqa: E731 - one-line numbering helper
    keep = lambda s: s.paper.paper_id not in excl.papers  # noqa: E731
    findings, debates = [], []
    for f in dossier.findings:
        fid = finding_id(f.statement)
        if fid in excl.findings or not keep(f.lead):
            continue
        agreeing = [s for s in f.agreeing if keep(s)]
        opposing = [] if fid in excl.debates else [s for s in f.opposing if keep(s)]
        tagged = evidence.KeyFinding(f.key, f.question, f.lead, agreeing, opposing)
        sides = [f.lead, *agreeing]
        refs = [cite(s.paper) for s in sides]
        findings.append(Finding(
            id=fid, statement=f.statement, tag=tagged.tag.value, citations=refs, group=f.question.text,
            quotes=[Quote(reference_id=r, text=s.text) for r, s in zip(refs, sides, strict=True)],
        ))
        for other in opposing:
            group = f"Debate {len(debates) // 2 + 1}: {f.question.text}"
            other_ref = cite(other.paper)
            debates += [
                Finding(id=f"{fid}:side-a", statement=f.statement, citations=[refs[0]], group=group,
                        quotes=[Quote(reference_id=refs[0], text=f.lead.text)]),
                Finding(id=f"{fid}:side-b", statement=evidence.statement_of(other.text), citations=[other_ref], group=group,
                        quotes=[Quote(reference_id=other_ref, text=other.text)]),
            ]
    gaps, directions = _gaps(dossier, findings)
    report.sections = [
        Section(title=SECTIONS[0], body=_introduction(dossier), requires_citations=False),
        Section(title=SECTIONS[1], body=_landscape(dossier, cite, keep), requires_citations=False),
        Section(title=SECTIONS[2], findings=findings,
                body="" if findings else "No passage of the corpus answered the sub-questions closely enough to state a finding."),
        Section(title=SECTIONS[3], findings=debates, body=(
            "Each debate pairs a key finding with a passage of another paper that states the opposite; both sides are quoted."
            if debates else "The counter-evidence searches found no passage stating the opposite of a key finding.")),
        Section(title=SECTIONS[4], body="\n".join(gaps), requires_citations=False),
        Section(title=SECTIONS[5], body="\n".join(directions), requires_citations=False),
    ]
    return report


def _introduction(dossier: Dossier) -> str:
    job = dossier.job
    where = "the local corpus" + (f" and {', '.join(job.outside_sources)}" if job.outside_sources else "")
    lines = [f"This review examines the literature on: {job.topic}.", f"It asks {len(dossier.questions)} sub-questions:", ""]
    lines += [f"- {q.id}: {q.text}" for q in dossier.questions]
    lines += ["", f"Evidence comes from {where}. Each key finding states a passage of a cited paper and quotes it; "
              "its tag follows the number of agreeing and conflicting sources found by separate searches."]
    return "\n".join(lines)


def _landscape(dossier: Dossier, cite: Any, keep: Any) -> str:
    lines: list[str] = []
    overview = dossier.overview
    if overview is not None:
        lines.append(f"The corpus holds {overview.papers} papers in {overview.chunks} passages.")
        years = sorted(overview.papers_per_year)
        if years:
            lines.append(f"Publication years span {years[0]}–{years[-1]}; {overview.papers_without_year} papers have no year.")
        if overview.mean_citations is not None:
            lines.append(f"Mean citation count: {overview.mean_citations} over {overview.papers_with_citations} papers with a count.")
    # What the corpus does not hold (citation counts, dated matches) is left out rather than announced.
    points = [p for p in dossier.trends if p.papers]
    if points:
        per_year = ", ".join(f"{p.year}: {p.papers}" for p in points)
        lines.append(f'Papers matching "{dossier.trend_query}" per year: {per_year}.')
    key = [p for p in dossier.key_papers[:3] if keep(evidence.Sentence(p, ""))]
    if key:
        lines.append("The key papers for the topic, from metadata search and citation ranking, are listed below.")
        # One sentence per paper (no bullet): the checker tests each marker against its own title.
        lines += [p.title.rstrip(".") + (f" ({p.year})" if p.year else "") + f" [{cite(p)}]." for p in key]
    return "\n\n".join(lines)


def _gaps(dossier: Dossier, findings: list[Finding]) -> tuple[list[str], list[str]]:
    gaps: list[str] = []
    directions: list[str] = []

    def add(gap: str, direction: str) -> None:
        gaps.append(f"- G{len(gaps) + 1}: {gap}")
        directions.append(f"- D{len(directions) + 1} (addresses G{len(gaps)}): {direction}")

    answered = {f.group for f in findings}
    for question in dossier.questions:
        if question.text not in answered:
            add(f"no passage of the corpus answered {question.id} ({question.text})",
                f"primary studies that address {question.id} directly ({question.text})")
    # Each gap once, not once per finding.
    contested = [f for f in findings if f.tag == "CONTESTED"]
    if contested:
        add(f"{len(contested)} finding(s) conflict with another paper (see Contradictions and Debates)",
            "studies designed to resolve those conflicts, with matched populations, doses and outcomes")
    alone = [f for f in findings if f.tag == "INSUFFICIENT"]
    if alone:
        which = "no finding is" if len(alone) == len(findings) else f"{len(alone)} of {len(findings)} findings are not"
        add(f"{which} supported by a second paper", "independent replications of the single-source findings")
    if not gaps:
        add("every sub-question had agreeing evidence, but only within the searched sources",
            "a systematic search beyond the local corpus to test whether the agreement holds")
    return gaps[:8], directions[:8]
