"""The report lifecycle (`Ledger.reports`) shared by the modes (literature review, claim verification, source list).

    report:  running ─→ completed ─→ stale ─→ running (refresh) ─→ completed …
                └─────→ failed ──────────────→ running (refresh)

A report's content is versioned in `report_versions` (one version per run, so a redelivered
job never writes a second one); `report_claims` names the ledger claims the current version
rests on. When one of them stops being trustworthy — it left `active` (superseded, or
withdrawn after having been active) or a periodic agent holds an open `eroded` /
`retracted_source` / `broken_provenance` finding against it — the report is `stale`.
`undermined_claims` finds those claims in one set-based query and
`mark_stale` moves the completed reports that rest on one of them; both are
called by whoever sweeps (the reviewer service, on `research.claim.decided` and on a tick).
Every move writes its audit row (`research.report.*`, `kind` in the payload) in the caller's
transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, exists, func, insert, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from research_ledger.audit import storable
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.deidentified import check_report
from research_ledger.status import REFRESHABLE_REPORT_STATES, ReportStatus
from research_ledger.tables import ReportClaim, ReportRow, ReportVersionRow, SourceListRun

REASON_LIMIT = 2000

# the rows `Reports` returns, as the services type them (they never query the tables themselves)
__all__ = [
    "REASON_LIMIT",
    "REFRESHABLE",
    "UNDERMINING_FINDINGS",
    "ReportRow",
    "ReportVersionRow",
    "Reports",
    "StaleReport",
    "UnderminedClaim",
]
# Finding kinds (replicator, librarian) that make a report resting on the claim stale.
UNDERMINING_FINDINGS = ("eroded", "retracted_source", "broken_provenance")
REFRESHABLE = REFRESHABLE_REPORT_STATES


@dataclass(frozen=True, slots=True)
class StaleReport:
    """A report just marked stale, with what a run event about it needs."""

    report_id: uuid.UUID
    kind: str
    run_id: str
    version: int
    reason: str

    def run_details(self, **why: Any) -> dict[str, Any]:
        """The payload of the `STALE` event its run hears: the report, the reason, and `why`
        (what made it stale: the undermined claim, the retraction's origin)."""
        return {
            "report_id": str(self.report_id),
            "kind": self.kind,
            "reason": self.reason,
            "version": self.version,
            **why,
        }


@dataclass(frozen=True, slots=True)
class UnderminedClaim:
    """A claim some completed report rests on that is no longer trustworthy, and why."""

    claim_id: uuid.UUID
    reason: str


UNDERMINED = text(
    """
SELECT DISTINCT ON (rc.claim_id) rc.claim_id,
       CASE WHEN mc.status IN ('superseded', 'rejected') THEN 'claim ' || mc.status
            ELSE 'finding ' || f.kind END AS reason
FROM report_claims rc
JOIN reports r ON r.id = rc.report_id AND r.status = 'completed'
JOIN memory_claims mc ON mc.id = rc.claim_id
LEFT JOIN LATERAL (
    SELECT kind FROM findings
    WHERE claim_ids @> ARRAY[rc.claim_id] AND kind = ANY(CAST(:kinds AS text[]))
      AND resolved_at IS NULL AND expires_at > now()
    ORDER BY created_at LIMIT 1
) f ON true
WHERE f.kind IS NOT NULL
   OR (mc.status = 'superseded'
       -- superseded by a sibling finding of the same report: the report still holds the newer one
       AND NOT EXISTS (SELECT 1 FROM report_claims s WHERE s.report_id = rc.report_id AND s.claim_id = mc.superseded_by))
   -- rejected after having been active (withdrawn by a re-critique), not rejected on first judgement
   OR (mc.status = 'rejected'
       AND EXISTS (SELECT 1 FROM audit_events a WHERE a.claim_id = mc.id AND a.action = 'research.claim.promoted'))
ORDER BY rc.claim_id
LIMIT :limit
"""
)


STALE_CITING = text(
    """
WITH cited AS (
    SELECT r.id, ref->>'paper_id' AS source_id
    FROM reports r
    JOIN report_versions v ON v.report_id = r.id AND v.version = r.current_version
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(v.content->'references') = 'array'
             THEN v.content->'references' ELSE '[]'::jsonb END) ref
    WHERE r.status = 'completed' AND ref->>'paper_id' = ANY(CAST(:ids AS text[]))
    UNION ALL
    SELECT rc.report_id, c.source_id
    FROM unnest(CAST(:claims AS uuid[]), CAST(:cited AS text[])) AS c(claim_id, source_id)
    JOIN report_claims rc ON rc.claim_id = c.claim_id
), first AS (
    SELECT id, min(source_id) AS source_id FROM cited GROUP BY id
)
UPDATE reports r
SET status = 'stale', stale_reason = 'cited source ' || first.source_id || ' retracted',
    updated_at = now()
FROM first
WHERE r.id = first.id AND r.status = 'completed'
RETURNING r.id, r.kind, r.run_id, r.current_version, r.stale_reason
"""
)


class Reports(LedgerBase):
    """Intent methods on `reports`, `report_versions` and `report_claims` (`Ledger.reports`)."""

    def _audit_report(
        self,
        action: AuditAction,
        report_id: uuid.UUID,
        kind: str,
        payload: dict[str, Any],
        *,
        claim_id: uuid.UUID | None = None,
    ) -> None:
        """Stage `action`'s audit row about report `report_id`: its payload names the report's `kind`."""
        self.audit(
            action,
            claim_id=claim_id,
            subject_ids={"report_id": report_id},
            payload={"kind": kind, **payload},
        )

    # --- reads ------------------------------------------------------------------------------
    async def get(self, report_id: uuid.UUID, *, kind: str | None = None) -> ReportRow | None:
        row = await self.session.get(ReportRow, report_id)
        return row if row is not None and (kind is None or row.kind == kind) else None

    async def version(
        self, report_id: uuid.UUID, version: int | None = None
    ) -> ReportVersionRow | None:
        """Version `version` of the report, or its latest."""
        query = select(ReportVersionRow).where(ReportVersionRow.report_id == report_id)
        if version is not None:
            query = query.where(ReportVersionRow.version == version)
        return await self.session.scalar(query.order_by(ReportVersionRow.version.desc()).limit(1))

    async def version_of_run(self, report_id: uuid.UUID, run_id: str) -> ReportVersionRow | None:
        """The version `run_id` saved, if it saved one (a redelivered run then does not run again)."""
        return await self.session.scalar(
            select(ReportVersionRow).where(
                ReportVersionRow.report_id == report_id, ReportVersionRow.run_id == run_id
            )
        )

    async def versions(self, report_id: uuid.UUID) -> list[ReportVersionRow]:
        rows = await self.session.scalars(
            select(ReportVersionRow)
            .where(ReportVersionRow.report_id == report_id)
            .order_by(ReportVersionRow.version)
        )
        return list(rows)

    async def resting_on(self, claim_id: uuid.UUID) -> list[uuid.UUID]:
        rows = await self.session.scalars(
            select(ReportClaim.report_id).where(ReportClaim.claim_id == claim_id)
        )
        return list(rows)

    # --- reads for readers (the gateway's routes) ----------------------------------------------
    async def listing(
        self, *, kind: str, status: str | None = None, limit: int = 50
    ) -> list[ReportRow]:
        """Reports of `kind` (in `status`, when given), most recently updated first."""
        query = select(ReportRow).where(ReportRow.kind == kind)
        if status is not None:
            query = query.where(ReportRow.status == status)
        rows = await self.session.scalars(
            query.order_by(ReportRow.updated_at.desc(), ReportRow.id).limit(limit)
        )
        return list(rows)

    async def citing_paper(
        self, paper_id: str, *, limit: int
    ) -> list[tuple[ReportRow, dict[str, Any]]]:
        """The reports whose current version lists `paper_id` among its references (at the top
        of its content or under `report`), most recently updated first, each with that
        version's content."""
        cites = {"references": [{"paper_id": paper_id}]}
        query = (
            select(ReportRow, ReportVersionRow.content)
            .join(
                ReportVersionRow,
                and_(
                    ReportVersionRow.report_id == ReportRow.id,
                    ReportVersionRow.version == ReportRow.current_version,
                ),
            )
            .where(
                or_(
                    ReportVersionRow.content.contains(cites),
                    ReportVersionRow.content.contains({"report": cites}),
                )
            )
            .order_by(ReportRow.updated_at.desc())
            .limit(limit)
        )
        return [(report, content) for report, content in (await self.session.execute(query)).all()]

    async def diffs(self, report_id: uuid.UUID) -> dict[int, dict[str, Any] | None]:
        """Each version of the report and its diff to the version before (None for the first)."""
        rows = await self.session.execute(
            select(ReportVersionRow.version, ReportVersionRow.diff).where(
                ReportVersionRow.report_id == report_id
            )
        )
        return {version: diff for version, diff in rows.all()}

    async def holds_run(self, run_id: str) -> bool:
        """Whether `run_id` is a report's current run or a source list's run (a run with events)."""
        return bool(
            await self.session.scalar(
                select(
                    or_(
                        exists().where(ReportRow.run_id == run_id),
                        exists().where(SourceListRun.run_id == run_id),
                    )
                )
            )
        )

    # --- moves ------------------------------------------------------------------------------
    async def open(
        self,
        report_id: uuid.UUID,
        *,
        kind: str,
        run_id: str,
        subject: str,
        subject_key: str,
        request: dict[str, Any] | None = None,
        owner: dict[str, Any] | None = None,
        save_to: dict[str, Any] | None = None,
    ) -> bool:
        """Record a requested report (`running`); False when it already exists.

        One writer opens a report, by where it was asked for: over HTTP or MCP the gateway opens it
        with its `owner` in the transaction that stages the command in the outbox, so the command
        is on the bus only once the report is; a command published on the bus (a schedule, the
        replicator's re-verification, a watched claim) is opened by the service that receives it,
        without an owner. The service opens every command it receives, so its open of a report
        the gateway opened is a no-op; an existing row is never changed."""
        check_report(
            subject=subject, subject_key=subject_key, request=request, save_to=save_to
        )  # refused unless de-identified
        inserted = await self.session.scalar(
            pg_insert(ReportRow)
            .values(
                id=report_id,
                kind=kind,
                status=ReportStatus.running,
                run_id=run_id,
                subject=storable(subject),
                subject_key=storable(subject_key[:200]),
                request=storable(request or {}),
                owner=storable(owner or {}),
                save_to=storable(save_to or {}),
                current_version=0,
            )
            .on_conflict_do_nothing()
            .returning(ReportRow.id)
        )
        if inserted is None:
            return False
        self._audit_report(
            AuditAction.REPORT_OPENED,
            report_id,
            kind,
            {"run_id": run_id, "subject_key": subject_key[:200]},
        )
        return True

    async def save_version(
        self,
        report_id: uuid.UUID,
        *,
        run_id: str,
        content: dict[str, Any],
        markdown: str,
        citation_check: dict[str, Any] | None = None,
        review: dict[str, Any] | None = None,
        claim_ids: list[uuid.UUID] | None = None,
        diff: dict[str, Any] | None = None,
        counts: dict[str, Any] | None = None,
    ) -> int:
        """Store the next version of the report and point `report_claims` at its claims; returns the
        version number. A second save from the same run returns the version already stored."""
        row = await self.session.get(ReportRow, report_id, with_for_update=True)
        if row is None:
            raise LookupError(f"no report {report_id}")
        existing = await self.session.scalar(
            select(ReportVersionRow.version).where(
                ReportVersionRow.report_id == report_id, ReportVersionRow.run_id == run_id
            )
        )
        if existing is not None:
            return int(existing)
        version = row.current_version + 1
        claims = list(dict.fromkeys(claim_ids or []))
        await self.session.execute(
            insert(ReportVersionRow).values(
                report_id=report_id,
                version=version,
                run_id=run_id,
                content=storable(content),
                markdown=storable(markdown),
                citation_check=storable(citation_check or {}),
                review=storable(review or {}),
                claim_ids=claims,
                diff=storable(diff) if diff is not None else None,
            )
        )
        await self.session.execute(
            update(ReportRow)
            .where(ReportRow.id == report_id)
            .values(current_version=version, updated_at=func.now())
        )
        await self.session.execute(delete(ReportClaim).where(ReportClaim.report_id == report_id))
        if claims:
            await self.session.execute(
                insert(ReportClaim).values(
                    [{"report_id": report_id, "claim_id": c} for c in claims]
                )
            )
        changes = {k: len(v) for k, v in (diff or {}).items() if isinstance(v, list)}
        self._audit_report(
            AuditAction.REPORT_VERSION_SAVED,
            report_id,
            row.kind,
            {
                "version": version,
                "run_id": run_id,
                "claims": len(claims),
                "citation_ok": (citation_check or {}).get("ok"),
                "changes": changes,
                **(counts or {}),
            },
        )
        return version

    async def complete(self, report_id: uuid.UUID, *, outcome: str | None = None) -> bool:
        """running → completed; False when the report is not running (a redelivery)."""
        row = await self._move(
            report_id, ReportStatus.completed, from_states=(ReportStatus.running,)
        )
        if row is None:
            return False
        self._audit_report(
            AuditAction.REPORT_COMPLETED,
            report_id,
            row.kind,
            {"version": row.current_version, "outcome": outcome},
        )
        return True

    async def fail(self, report_id: uuid.UUID, reason: str) -> bool:
        """running → failed with `reason`; False when it already ended or is unknown."""
        reason = storable(reason[:REASON_LIMIT])
        row = await self._move(
            report_id, ReportStatus.failed, from_states=(ReportStatus.running,), error=reason
        )
        if row is None:
            return False
        self._audit_report(
            AuditAction.REPORT_FAILED,
            report_id,
            row.kind,
            {"reason": reason, "previous_status": ReportStatus.running},
        )
        return True

    async def refresh(self, report_id: uuid.UUID, *, run_id: str) -> str | None:
        """completed | stale | failed → running under a new run; returns the previous status, or
        None when the report is unknown or already running."""
        previous = await self.session.scalar(
            select(ReportRow.status).where(ReportRow.id == report_id).with_for_update()
        )
        if previous not in REFRESHABLE:
            return None
        row = await self._move(
            report_id,
            ReportStatus.running,
            from_states=REFRESHABLE,
            run_id=run_id,
            error=None,
            stale_reason=None,
        )
        assert row is not None  # locked above
        self._audit_report(
            AuditAction.REPORT_REFRESH_REQUESTED,
            report_id,
            row.kind,
            {"run_id": run_id, "previous_status": previous, "version": row.current_version},
        )
        return previous

    async def mark_stale(self, claim_id: uuid.UUID, reason: str) -> list[StaleReport]:
        """Every completed report resting on `claim_id` → stale with `reason` (one audit row each)."""
        reason = storable(reason[:REASON_LIMIT])
        rows = (
            await self.session.execute(
                update(ReportRow)
                .where(
                    ReportRow.status == ReportStatus.completed,
                    ReportRow.id.in_(
                        select(ReportClaim.report_id).where(ReportClaim.claim_id == claim_id)
                    ),
                )
                .values(status=ReportStatus.stale, stale_reason=reason, updated_at=func.now())
                .returning(
                    ReportRow.id, ReportRow.kind, ReportRow.run_id, ReportRow.current_version
                )
            )
        ).all()
        stale = [StaleReport(r.id, r.kind, r.run_id, r.current_version, reason) for r in rows]
        for report in stale:
            self._audit_report(
                AuditAction.REPORT_STALE,
                report.report_id,
                report.kind,
                {"reason": reason, "version": report.version},
                claim_id=claim_id,
            )
        return stale

    async def mark_stale_citing(
        self, source_ids: list[str], claims: Mapping[uuid.UUID, list[str]]
    ) -> list[StaleReport]:
        """Every completed report whose current version cites one of `source_ids` (a reference's
        `paper_id`) or rests on one of `claims` (claim → the retracted sources it cites) → stale,
        with the reason `cited source <id> retracted` (one audit row each); one statement."""
        if not source_ids:
            return []
        claim_ids = list(claims)
        cited = [claims[c][0] for c in claim_ids]
        rows = (
            await self.session.execute(
                STALE_CITING, {"ids": list(source_ids), "claims": claim_ids, "cited": cited}
            )
        ).all()
        stale = [
            StaleReport(r.id, r.kind, r.run_id, r.current_version, r.stale_reason) for r in rows
        ]
        for report in stale:
            self._audit_report(
                AuditAction.REPORT_STALE,
                report.report_id,
                report.kind,
                {"reason": report.reason, "version": report.version},
            )
        return stale

    async def undermined_claims(self, *, limit: int = 500) -> list[UnderminedClaim]:
        """Claims that completed reports rest on and that left `active` or carry an open
        undermining finding (see the module docstring); one query, oldest claim ids first."""
        rows = await self.session.execute(
            UNDERMINED, {"kinds": list(UNDERMINING_FINDINGS), "limit": limit}
        )
        return [UnderminedClaim(r.claim_id, r.reason) for r in rows]

    async def _move(
        self,
        report_id: uuid.UUID,
        status: ReportStatus,
        *,
        from_states: tuple[ReportStatus, ...],
        **values: Any,
    ) -> ReportRow | None:
        row = await self.session.scalar(
            update(ReportRow)
            .where(ReportRow.id == report_id, ReportRow.status.in_(from_states))
            .values(status=status, updated_at=func.now(), **values)
            .returning(ReportRow)
        )
        return row
