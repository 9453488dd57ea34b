"""Make a draft conform before anyone reads it, and turn the final report into ledger claims.

`conform`: a reference the tools never returned (fabricated, or with a made-up paper id) is
dropped with every finding that cites it; a quote not found verbatim in its source is dropped,
and a finding left with no quote goes too. Both are counted, never shown. The offline author
never triggers either; an LLM author may.

`claim_proposals`: every tagged key finding becomes a pending ledger claim — entity = the
review's topic key, statement = the finding, supports = its quotes — with a deterministic id
(review + finding), so a redelivered job proposes nothing twice and a refresh re-uses a claim
that is still in good standing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from research_contracts import SourceHit, Support
from research_contracts.corpus_tools import PaperRecord
from research_ledger import ClaimProposal
from research_reports import FindingTag, Report
from research_reports import text as checker_text
from research_reviewer.prepare import ReviewJob

CONFIDENCE = {
    FindingTag.supported.value: 0.8,
    FindingTag.contested.value: 0.5,
    FindingTag.insufficient.value: 0.45,
}
CLAIM_NAMESPACE = uuid.UUID("8a3f0e5e-5c1b-4d7e-9f42-0d6c2b7a9e31")


@dataclass
class Conformed:
    report: Report
    dropped_references: int = 0
    dropped_quotes: int = 0
    dropped_findings: int = 0

    def counts(self) -> dict[str, int]:
        return {
            "dropped_references": self.dropped_references,
            "dropped_quotes": self.dropped_quotes,
            "dropped_findings": self.dropped_findings,
        }


def conform(report: Report, known: dict[str, PaperRecord]) -> Conformed:
    """`report` with fabricated references and quotes removed (see the module docstring)."""
    out = Conformed(report.model_copy(deep=True))
    fabricated = {r.id for r in out.report.references if (r.paper_id or "") not in known}
    out.report.references = [r for r in out.report.references if r.id not in fabricated]
    out.dropped_references = len(fabricated)
    for section in out.report.sections:
        kept = []
        for finding in section.findings:
            if set(finding.cited_ids()) & fabricated:
                out.dropped_findings += 1
                continue
            quotes = []
            for quote in finding.quotes:
                ref = out.report.reference(quote.reference_id)
                if ref is not None and checker_text.found_verbatim(quote.text, ref.source_text):
                    quotes.append(quote)
                else:
                    out.dropped_quotes += 1
            if finding.quotes and not quotes:
                out.dropped_findings += 1
                continue
            kept.append(finding.model_copy(update={"quotes": quotes}))
        section.findings = kept
    return out


@dataclass
class Proposal:
    claim: ClaimProposal
    hits: list[SourceHit] = field(default_factory=list)


def claim_id_for(job: ReviewJob, finding_key: str, *, fresh: bool = False) -> uuid.UUID:
    """The claim of a finding of this review; `fresh` gives the id a refresh uses when the old
    claim is no longer in good standing."""
    suffix = f":{job.run_id}" if fresh else ""
    return uuid.uuid5(CLAIM_NAMESPACE, f"{job.review_id}:{finding_key}{suffix}")


def claim_proposals(
    report: Report,
    job: ReviewJob,
    model: str,
    *,
    claim_days: int,
    reuse: dict[str, bool] | None = None,
) -> list[Proposal]:
    """One pending claim per tagged key finding. `reuse[key]` False means the claim that finding
    had is no longer in good standing: propose it afresh under a new id."""
    section = report.section("Key Findings")
    proposals = []
    for finding in section.findings if section else []:
        if not finding.tag or not finding.quotes:
            continue
        supports, hits = [], {}
        for quote in finding.quotes:
            ref = report.reference(quote.reference_id)
            if ref is None or not ref.paper_id:
                continue
            supports.append(
                Support(
                    source_id=ref.paper_id,
                    title=ref.title,
                    quote=quote.text,
                    locator=f"reference [{ref.id}]",
                )
            )
            hits[ref.paper_id] = SourceHit(
                source_id=ref.paper_id,
                source=ref.paper_id.split(":", 1)[0],
                title=ref.title,
                authors=ref.authors,
                venue=ref.venue,
                year=ref.year,
                doi=ref.doi,
                abstract=ref.source_text,
            )
        if not supports:
            continue
        key = finding.key()
        claim_id = claim_id_for(job, key, fresh=reuse is not None and reuse.get(key) is False)
        proposals.append(
            Proposal(
                claim=ClaimProposal(
                    claim_id=claim_id,
                    task_id=None,
                    entity=job.topic_key,
                    question=job.topic,
                    statement=checker_text.without_markers(finding.statement),
                    confidence=CONFIDENCE.get(finding.tag, 0.5),
                    supports=supports,
                    dropped_supports=0,
                    model=model,
                    decay_at=datetime.now(UTC) + timedelta(days=claim_days),
                    provenance={
                        "review_id": str(job.review_id),
                        "run_id": job.run_id,
                        "finding_id": key,
                        "tag": finding.tag,
                    },
                ),
                hits=list(hits.values()),
            )
        )
    return proposals


def attach_claims(report: Report, claim_ids: dict[str, uuid.UUID]) -> Report:
    """The report with each key finding naming its ledger claim."""
    out = report.model_copy(deep=True)
    for section in out.sections:
        section.findings = [
            f.model_copy(update={"claim_id": str(claim_ids[f.key()])})
            if f.key() in claim_ids
            else f
            for f in section.findings
        ]
    return out
