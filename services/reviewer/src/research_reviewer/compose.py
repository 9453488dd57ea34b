"""Step 6 of the author: the seven-section report, written from the dossier.

Introduction · Research Landscape (what the corpus holds on the topic: years, venues, authors of
the on-topic papers from their metadata — a reference manager's export included) · Key Findings
(grouped by subtopic cluster, each named as a question; tagged, cited, with the exact quotes) ·
Contradictions and Debates (both sides quoted) · Research Gaps (what the clusters show, each
stated once) · Suggested Future Research Directions (each tied to a gap) · References.

Introduction, Research Landscape, Research Gaps and Future Directions are computed from the
request, the corpus metadata and the review's own evidence counts, so they are marked
`requires_citations=False` (their markers are still checked); every statement taken from the
literature sits in Key Findings or Contradictions with a `[N]` marker and a verbatim quote.
`Exclusions` is what a peer review taught the author: papers, findings and debates to leave out.
"""

from __future__ import annotations

from collections import Counter
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
    sides: set[tuple[str, str]] = field(
        default_factory=set
    )  # (finding id, paper id): not a side of that finding

    def learn(self, review: PeerReview) -> dict[str, int]:
        """Take in a review's issues: refused references (check 2), papers off the topic (check 3,
        relevance), sides whose stance contradicts their tag or whose citation the checker refuses
        (check 3: that side of that finding), findings not found again (check 4), false
        contradictions (check 6)."""
        before = (len(self.papers), len(self.findings), len(self.debates), len(self.sides))
        for issue in review.issues:
            key = issue.finding_id.split(":")[0] if issue.finding_id else None
            if issue.kind == "off_topic" and issue.paper_id:
                self.papers.add(issue.paper_id)
            elif key and issue.paper_id and issue.check == 3 and issue.severity.value != "MINOR":
                # A side that does not hold (stance, or the checker's unsupported citation) goes, not the
                # whole finding — unless it is the finding's own paper (`compose` then drops the finding).
                self.sides.add((key, issue.paper_id))
            elif issue.check == 6 and key:
                self.debates.add(key)
            elif issue.paper_id and issue.check == 2:
                self.papers.add(issue.paper_id)
            elif key and issue.severity.value != "MINOR":
                self.findings.add(key)
        after = (len(self.papers), len(self.findings), len(self.debates), len(self.sides))
        return {
            "papers": after[0] - before[0],
            "findings": after[1] - before[1],
            "debates": after[2] - before[2],
            "sides": after[3] - before[3],
        }


def finding_id(statement: str) -> str:
    return Finding(statement=statement).key()


def reference_of(paper: PaperRecord) -> Reference:
    return Reference(
        id=1,
        title=paper.title or paper.paper_id,
        authors=paper.authors,
        year=paper.year,
        venue=paper.venue,
        doi=paper.doi,
        paper_id=paper.paper_id,
        source_text=evidence.source_text(paper),
    )


def compose(dossier: Dossier, *, model: str) -> Report:
    job, excl = dossier.job, dossier.exclusions
    report = Report(
        title=f"Literature review: {job.topic}",
        kind="review",
        metadata={
            "engine": "offline" if model.startswith("offline") else "llm",
            "model": model,
            "topic": job.topic,
            "topic_key": job.topic_key,
            "run_id": job.run_id,
            "sources": job.sources,
            "questions": [{"id": q.id, "question": q.text} for q in dossier.questions],
        },
    )

    def cite(paper: PaperRecord) -> int:
        return report.add_reference(reference_of(paper))

    def keep(s: evidence.Sentence) -> bool:
        return s.paper.paper_id not in excl.papers

    findings: list[Finding] = []
    debates: list[Finding] = []
    for f in dossier.findings:
        fid = finding_id(f.statement)
        if fid in excl.findings or not keep(f.lead) or (fid, f.lead.paper.paper_id) in excl.sides:
            continue

        def side(s: evidence.Sentence, fid: str = fid) -> bool:
            return keep(s) and (fid, s.paper.paper_id) not in excl.sides

        agreeing = [s for s in f.agreeing if side(s)]
        opposing = [] if fid in excl.debates else [s for s in f.opposing if side(s)]
        tagged = evidence.KeyFinding(f.key, f.question, f.lead, agreeing, opposing)
        sides = [f.lead, *agreeing]
        refs = [cite(s.paper) for s in sides]
        findings.append(
            Finding(
                id=fid,
                statement=f.statement,
                tag=tagged.tag.value,
                citations=refs,
                group=f.question.text,
                quotes=[
                    Quote(reference_id=r, text=s.text) for r, s in zip(refs, sides, strict=True)
                ],
            )
        )
        for other in opposing:
            group = f"Debate {len(debates) // 2 + 1}: {f.question.text}"
            other_ref = cite(other.paper)
            debates += [
                Finding(
                    id=f"{fid}:side-a",
                    statement=f.statement,
                    citations=[refs[0]],
                    group=group,
                    quotes=[Quote(reference_id=refs[0], text=f.lead.text)],
                ),
                Finding(
                    id=f"{fid}:side-b",
                    statement=evidence.statement_of(other.text),
                    citations=[other_ref],
                    group=group,
                    quotes=[Quote(reference_id=other_ref, text=other.text)],
                ),
            ]
    gaps, directions = _gaps(dossier, findings)
    report.sections = [
        Section(title=SECTIONS[0], body=_introduction(dossier), requires_citations=False),
        Section(title=SECTIONS[1], body=_landscape(dossier, cite, keep), requires_citations=False),
        Section(
            title=SECTIONS[2],
            findings=findings,
            body=""
            if findings
            else "No on-topic paper of the searched sources states a finding about the topic.",
        ),
        Section(
            title=SECTIONS[3],
            findings=debates,
            body=(
                "Each debate pairs a key finding with a passage of another paper that the stance model reads as contradicting "
                "it; both sides are quoted."
                if debates
                else "No on-topic paper found, counter-evidence searches included, contradicts a key finding."
            ),
        ),
        Section(title=SECTIONS[4], body="\n".join(gaps), requires_citations=False),
        Section(title=SECTIONS[5], body="\n".join(directions), requires_citations=False),
    ]
    return report


def _introduction(dossier: Dossier) -> str:
    job = dossier.job
    where = "the local corpus" + (
        f" and {', '.join(job.outside_sources)}" if job.outside_sources else ""
    )
    lines = [f"This review examines the literature on: {job.topic}."]
    if dossier.questions:
        lines += [
            (
                f"Of the papers found in {where}, {len(dossier.on_topic)} are on the topic; their findings fall into "
                f"{len(dossier.questions)} subtopic(s):"
            ),
            "",
        ]
        lines += [f"- {q.id}: {q.text}" for q in dossier.questions]
    else:
        lines.append(
            f"No paper found in {where} is close enough to the topic to report its findings."
        )
    lines += [
        "",
        (
            "Each key finding is a results or conclusions sentence of a cited paper, quoted verbatim. It is SUPPORTED "
            "when another paper's findings support it, CONTESTED when one contradicts it (both sides quoted), "
            "INSUFFICIENT when it stands alone; relevance, evidence and stance are judged by the trained models."
        ),
    ]
    return "\n".join(lines)


def _landscape(dossier: Dossier, cite: Any, keep: Any) -> str:
    """What the corpus holds for this topic from the papers' metadata, in few sentences; what it does
    not hold (years, venues, citation counts) is left out rather than announced."""
    lines: list[str] = []
    overview = dossier.overview
    papers = [o.paper for o in dossier.on_topic]
    if overview is not None:
        years = sorted(overview.papers_per_year)
        span = f" published {years[0]}–{years[-1]}" if years else ""
        lines.append(
            f"The corpus holds {overview.papers} papers{span}; {len(papers)} of those retrieved for this topic "
            f"are on it{_profile(papers)}."
        )
    points = [p for p in dossier.trends if p.papers]
    if points:
        per_year = ", ".join(f"{p.year}: {p.papers}" for p in points)
        lines.append(f'Papers matching "{dossier.trend_query}" per year: {per_year}.')
    key = [p for p in dossier.key_papers if keep(evidence.Sentence(p, ""))][:3]
    if key:
        lines.append(
            "The key papers on the topic, from metadata search, citation ranking and relevance, are listed below."
        )
        # One sentence per paper (no bullet): the checker tests each marker against its own title.
        lines += [p.title.rstrip(".") + _byline(p) + f" [{cite(p)}]." for p in key]
    return "\n\n".join(lines)


def _profile(papers: list[PaperRecord]) -> str:
    """', published 2009–2014, most often in Circulation (3), by Jane Doe (2)' — what the metadata holds."""
    parts = []
    years = sorted(p.year for p in papers if p.year)
    if years:
        parts.append(
            f"published {years[0]}–{years[-1]}"
            if years[0] != years[-1]
            else f"published in {years[0]}"
        )
    venues = Counter(p.venue for p in papers if p.venue).most_common(2)
    if venues:
        parts.append("most often in " + " and ".join(f"{v} ({n})" for v, n in venues))
    authors = [
        (a, n)
        for a, n in Counter(a for p in papers for a in dict.fromkeys(p.authors)).most_common(2)
        if n > 1
    ]
    if authors:
        parts.append("with most papers by " + " and ".join(f"{a} ({n})" for a, n in authors))
    return (", " + ", ".join(parts)) if parts else ""


def _byline(paper: PaperRecord) -> str:
    """' — Doe et al., 2012' from the paper's metadata (empty when it has neither authors nor year)."""
    families = [a.split()[-1] for a in paper.authors if a.split()]
    who = (
        families[0]
        if len(families) == 1
        else f"{families[0]} and {families[1]}"
        if len(families) == 2
        else f"{families[0]} et al."
        if families
        else ""
    )
    when = str(paper.year) if paper.year else ""
    return f" — {', '.join(x for x in (who, when) if x)}" if who or when else ""


def _listed(items: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _gaps(dossier: Dossier, findings: list[Finding]) -> tuple[list[str], list[str]]:
    """What the clusters show is missing, each stated once: no on-topic finding, thin subtopics,
    conflicts, findings no second paper backs."""
    gaps: list[str] = []
    directions: list[str] = []

    def add(gap: str, direction: str) -> None:
        gaps.append(f"- G{len(gaps) + 1}: {gap}")
        directions.append(f"- D{len(directions) + 1} (addresses G{len(gaps)}): {direction}")

    if not findings:
        add(
            "the searched sources hold no finding on the topic itself",
            "primary studies of the topic itself",
        )
        return gaps, directions
    cited: dict[
        str | None, set[int]
    ] = {}  # per sub-question, the references its findings quote (corroboration included)
    for finding in findings:
        cited.setdefault(finding.group, set()).update(finding.cited_ids())
    thin = [
        c.question
        for c in dossier.clusters
        if c.question is not None and len(cited.get(c.question.text, ())) == 1
    ]
    if thin:
        named = _listed([f"{q.id} ({evidence.asked_about(q.text)})" for q in thin])
        add(
            f"a single study speaks to {named}",
            f"independent studies of {'these subtopics' if len(thin) > 1 else 'this subtopic'}",
        )
    contested = [f for f in findings if f.tag == "CONTESTED"]
    if contested:
        add(
            f"{len(contested)} finding(s) conflict with another paper (see Contradictions and Debates)",
            "studies designed to resolve those conflicts, with matched populations, doses and outcomes",
        )
    alone = [f for f in findings if f.tag == "INSUFFICIENT"]
    if alone:
        which = (
            "no finding is"
            if len(alone) == len(findings)
            else f"{len(alone)} of {len(findings)} findings are not"
        )
        add(
            f"{which} supported by a second paper",
            "independent replications of the single-source findings",
        )
    if not gaps:
        add(
            "every finding has agreeing evidence, but only within the searched sources",
            "a systematic search beyond the searched sources to test whether the agreement holds",
        )
    return gaps, directions
