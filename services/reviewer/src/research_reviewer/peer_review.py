"""The peer reviewer: seven checks of a draft, each a recorded step, then the verdict.

1 every required section present (missing → CRITICAL) · 2 every reference id exists with a
matching title and year — corpus ids in ONE `get_paper` batch — and every `[N]` resolves
(→ CRITICAL) · 3 every key finding tagged, the tag fitting its evidence count; by the trained
models, every finding's paper on the topic (relevance, → MAJOR `off_topic`) and every quoted side
taking the side its tag says (stance: a SUPPORTED finding's agreeing quote must support it, →
MAJOR `tag_contradicted`) · 4 3–5 findings (numbers first) found again by an independent search,
quote and all (→ MAJOR) · 5 most-cited papers on the topic the draft does not cite (→ MINOR,
MISSED_PAPERS) · 6 each debate a genuine disagreement — the stance model reads the opposing side
as contradicting the finding — its opposing side found again (→ MAJOR) · 7 each future direction
tied to a stated gap (→ MINOR). The citation checker's unsupported citations are MAJOR and its
uncited factual sentences MINOR. The verdict is `critique.PeerReview.verdict`.
"""

from __future__ import annotations

import asyncio
import re

from research_contracts.corpus_tools import CORPUS_PREFIX
from research_judgement import Judge, get_judge
from research_reports import CitationCheck, Finding, FindingTag, Reference, Report
from research_reports import text as checker_text
from research_reviewer import judged
from research_reviewer.compose import SECTIONS
from research_reviewer.critique import MissedPaper, PeerReview, Severity, summarise
from research_reviewer.evidence import topic_terms
from research_reviewer.tools import Toolbox

AGENT_ID = "peer_review_agent"
MODEL = "offline-peer-reviewer-v1"
_GAP = re.compile(r"\bG(\d+):")
_DIRECTION = re.compile(r"^\s*-\s*D\d+\b(.*)$", re.MULTILINE)
_ADDRESSES = re.compile(r"\(addresses G(\d+)\)")


def _norm(title: str) -> str:
    return re.sub(r"\W+", " ", title.lower()).strip()


class PeerReviewer:
    """Computes the seven checks with the corpus tools; deterministic for equal inputs."""

    model = MODEL

    def __init__(
        self,
        spot_checks: int = 4,
        *,
        cut: judged.TopicCut | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.spot_checks = spot_checks
        self.cut = cut or judged.TopicCut()  # the author's setting: when a paper is on the topic
        self.judge = (
            judge or get_judge()
        )  # the trained relevance and stance models (loaded once per process)

    async def review(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, iteration: int
    ) -> PeerReview:
        review = PeerReview(iteration=iteration, model=self.model)
        steps = (
            self._structure,
            self._references,
            self._tags,
            self._spot_check,
            self._coverage,
            self._contradictions,
            self._directions,
        )
        for number, step in enumerate(steps, start=1):
            async with tools.recorder.tool(
                f"peer_review.check_{number}", {"check": number}
            ) as call:
                before = len(review.issues)
                looked = await step(report, check, topic, tools, review)
                call.result = {
                    "looked_at": looked,
                    "issues": [i.model_dump(mode="json") for i in review.issues[before:]],
                }
            review.checks[str(number)] = {
                "looked_at": looked,
                "issues": len(review.issues) - before,
            }
        review.summary = summarise(review, len(_key_findings(report)), len(report.references))
        return review

    async def _structure(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        for title in SECTIONS:
            if report.section(title) is None:
                review.flag(
                    Severity.critical,
                    1,
                    title,
                    "required section is missing",
                    evidence="not in the draft",
                )
        if not report.references:
            review.flag(
                Severity.critical,
                1,
                "References",
                "required section is missing",
                evidence="no reference listed",
            )
        return len(SECTIONS) + 1

    async def _references(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        for ref_id in check.unknown_ids:
            review.flag(
                Severity.critical,
                2,
                "References",
                f"[{ref_id}] is cited but names no reference",
                evidence="the citation checker found no such entry",
                reference_id=ref_id,
            )
        corpus = [r for r in report.references if (r.paper_id or "").startswith(CORPUS_PREFIX)]
        found = {
            p.paper_id: p
            for p in await tools.get_papers(
                [r.paper_id for r in corpus if r.paper_id is not None], with_text=False
            )
        }
        for ref in corpus:
            paper = found.get(ref.paper_id or "")
            problem = None
            if paper is None:
                problem = "paper_id does not exist in the corpus"
            elif _norm(paper.title) != _norm(ref.title):
                problem = f"title does not match the corpus ({paper.title[:80]!r})"
            elif paper.year != ref.year:
                problem = f"year {ref.year} does not match the corpus ({paper.year})"
            if problem:
                review.flag(
                    Severity.critical,
                    2,
                    "References",
                    f"[{ref.id}] {problem}",
                    evidence=f"batch lookup of {len(corpus)} id(s)",
                    paper_id=ref.paper_id,
                    reference_id=ref.id,
                )
        return len(report.references)

    async def _tags(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        debated = {f.id.split(":")[0] for f in _debates(report)}
        findings = _key_findings(report)
        for finding in findings:
            sources = len(finding.cited_ids())
            problem = None
            if finding.tag not in {t.value for t in FindingTag}:
                problem = "finding has no confidence tag"
            elif finding.tag == FindingTag.supported and sources < 2:
                problem = f"SUPPORTED but rests on {sources} source"
            elif finding.tag == FindingTag.insufficient and sources != 1:
                problem = f"INSUFFICIENT but cites {sources} agreeing sources"
            elif finding.tag == FindingTag.contested and finding.key() not in debated:
                problem = "CONTESTED but no debate shows the conflicting side"
            if problem:
                review.flag(
                    Severity.major,
                    3,
                    "Key Findings",
                    problem,
                    evidence=_short(finding.statement),
                    finding_id=finding.key(),
                )
        await asyncio.to_thread(self._judged, report, topic, findings, review)
        for issue in check.issues:
            if issue.kind == "unsupported":
                cited = (
                    report.reference(issue.reference_id) if issue.reference_id is not None else None
                )
                review.flag(
                    Severity.major,
                    3,
                    issue.section or "",
                    f"citation does not support the sentence ({issue.reason})",
                    evidence=issue.detail,
                    finding_id=issue.finding_id,
                    paper_id=cited.paper_id if cited else None,
                    reference_id=issue.reference_id,
                )
            elif issue.kind == "uncited":
                review.flag(
                    Severity.minor,
                    3,
                    issue.section or "",
                    "factual sentence without a citation",
                    evidence=_short(issue.sentence),
                )
        return len(findings)

    def _judged(
        self, report: Report, topic: str, findings: list[Finding], review: PeerReview
    ) -> None:
        """Check 3 by the trained models (CPU: runs in a thread). A finding whose paper the relevance
        model puts off the topic is MAJOR (the revision drops the paper); so is a SUPPORTED finding
        whose agreeing quote the stance model does not read as support (the revision drops that side)."""
        leads = [_lead(report, f) for f in findings]
        judged_leads = [(f, ref) for f, ref in zip(findings, leads, strict=True) if ref is not None]
        off = judged.off_topic(
            self.judge, topic, [_passage(ref) for _, ref in judged_leads], self.cut
        )
        for (finding, ref), is_off in zip(judged_leads, off, strict=True):
            if is_off:
                review.flag(
                    Severity.major,
                    3,
                    "Key Findings",
                    f"the finding's paper [{ref.id}] is off the topic ("
                    f"{'relevance model' if self.cut.mode == 'chain' else 'abstract model'})",
                    evidence=_short(finding.statement),
                    finding_id=finding.key(),
                    paper_id=ref.paper_id,
                    reference_id=ref.id,
                    kind="off_topic",
                )
        for finding in findings:
            if finding.tag != FindingTag.supported:
                continue
            for quote in finding.quotes[1:]:
                quoted = report.reference(quote.reference_id)
                if quoted is None:
                    continue
                label = judged.stance_label(self.judge, finding.statement, quote.text, quoted.title)
                if label != "SUPPORT":
                    review.flag(
                        Severity.major,
                        3,
                        "Key Findings",
                        f"SUPPORTED, but the stance model reads [{quoted.id}]'s quote as {label}, not support",
                        evidence=_short(quote.text),
                        finding_id=finding.key(),
                        paper_id=quoted.paper_id,
                        reference_id=quoted.id,
                        kind="tag_contradicted",
                    )

    async def _spot_check(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        findings = [f for f in _key_findings(report) if _corpus_ids(report, f)]
        chosen = sorted(
            findings, key=lambda f: (not checker_text.numbers(f.statement), findings.index(f))
        )[: self.spot_checks]
        for finding in chosen:
            hits = await tools.search_papers(checker_text.without_markers(finding.statement), k=5)
            quote = finding.quotes[0].text if finding.quotes else finding.statement
            cited = _corpus_ids(report, finding)
            if not any(
                h.paper_id in cited and checker_text.found_verbatim(quote, h.text) for h in hits
            ):
                review.flag(
                    Severity.major,
                    4,
                    "Key Findings",
                    "finding could not be found again by an independent search",
                    evidence=f"top {len(hits)} passages: " + ", ".join(h.paper_id for h in hits),
                    finding_id=finding.key(),
                )
        return len(chosen)

    async def _coverage(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        cited = {r.paper_id for r in report.references}
        query = " ".join(topic_terms(topic)[:2]) or topic
        ranked = [
            p for p in await tools.top_cited(query, k=5) if p.citation_count
        ]  # high impact needs a count
        for paper in [p for p in ranked if p.paper_id not in cited][:3]:
            review.missed_papers.append(
                MissedPaper(
                    paper_id=paper.paper_id,
                    title=paper.title,
                    citations=paper.citation_count,
                    reason=f'among the most cited papers matching "{query}"',
                )
            )
            review.flag(
                Severity.minor,
                5,
                "Key Findings",
                f"high-impact paper not cited: {paper.title[:100]}",
                evidence=f"{paper.citation_count} citations",
                paper_id=paper.paper_id,
            )
        return len(ranked)

    async def _contradictions(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        sides: dict[str, list[Finding]] = {}
        for finding in _debates(report):
            sides.setdefault(finding.id.split(":")[0], []).append(finding)
        for key, pair in sides.items():
            if len(pair) != 2 or not await asyncio.to_thread(
                self._opposes, report, pair[0], pair[1]
            ):
                review.flag(
                    Severity.major,
                    6,
                    "Contradictions and Debates",
                    "the two sides do not state opposite things",
                    evidence=" vs ".join(_short(f.statement) for f in pair),
                    finding_id=key,
                )
                continue
            other = pair[1]
            hits = await tools.search_papers(checker_text.without_markers(other.statement), k=3)
            quote = other.quotes[0].text if other.quotes else other.statement
            if not any(checker_text.found_verbatim(quote, h.text) for h in hits) and _corpus_ids(
                report, other
            ):
                review.flag(
                    Severity.major,
                    6,
                    "Contradictions and Debates",
                    "the opposing side could not be found again in the corpus",
                    evidence=_short(other.statement),
                    finding_id=key,
                )
        return len(sides)

    async def _directions(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, review: PeerReview
    ) -> int:
        gaps_section, directions_section = report.section(SECTIONS[4]), report.section(SECTIONS[5])
        gaps = {int(n) for n in _GAP.findall(gaps_section.body if gaps_section else "")}
        lines = _DIRECTION.findall(directions_section.body if directions_section else "")
        for line in lines:
            tied = {int(n) for n in _ADDRESSES.findall(line)}
            if not tied or not tied <= gaps:
                review.flag(
                    Severity.minor,
                    7,
                    SECTIONS[5],
                    "direction is not tied to a stated gap",
                    evidence=_short(line),
                )
        if gaps and not lines:
            review.flag(
                Severity.minor, 7, SECTIONS[5], "gaps are stated but no direction addresses them"
            )
        return len(lines)

    def _opposes(self, report: Report, finding: Finding, other: Finding) -> bool:
        """Whether the stance model reads the other side's quote as contradicting the finding."""
        quote = other.quotes[0].text if other.quotes else other.statement
        ref = report.reference(other.citations[0]) if other.citations else None
        return (
            judged.stance_label(self.judge, finding.statement, quote, ref.title if ref else None)
            == "CONTRADICT"
        )


def _lead(report: Report, finding: Finding) -> Reference | None:
    """The reference of a finding's lead quote (the paper it states), else of its first citation."""
    ref_id = (
        finding.quotes[0].reference_id
        if finding.quotes
        else (finding.citations[0] if finding.citations else None)
    )
    return report.reference(ref_id) if ref_id is not None else None


def _passage(ref: Reference) -> tuple[str, str]:
    """(title, text) of a reference, as the author's relevance filter read the paper."""
    text = ref.source_text
    if ref.title and text.startswith(ref.title):
        text = text[len(ref.title) :]
    return ref.title, text.strip()


def _key_findings(report: Report) -> list[Finding]:
    section = report.section(SECTIONS[2])
    return list(section.findings) if section else []


def _debates(report: Report) -> list[Finding]:
    section = report.section(SECTIONS[3])
    return [f for f in section.findings if ":" in f.id] if section else []


def _corpus_ids(report: Report, finding: Finding) -> set[str]:
    refs = (report.reference(i) for i in finding.cited_ids())
    return {
        r.paper_id
        for r in refs
        if r is not None and r.paper_id is not None and r.paper_id.startswith(CORPUS_PREFIX)
    }


def _short(text: str, words: int = 18) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")
