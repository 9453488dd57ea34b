"""Every Grafana SQL panel runs, as `grafana_reader`, over a seeded ledger and shows what it should.

Each panel's SQL is expanded for its dashboard's default range ending at seed.END, run against
a freshly migrated database (tests/ops/conftest.py), and compared with the rows a person counts
from tests/ops/seed.py. A panel added without an expectation here fails `test_every_panel_is_expected`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
import yaml

from bench.harness.dashboards import (
    REPO,
    dashboards,
    explorer_variables,
    multi_variables,
    render,
    sql_panels,
    targets,
    variable_values,
)
from bench.harness.grafana_macros import expand
from tests.ops.seed import AUDIT, C1, C2, END, T1, at

pytestmark = pytest.mark.integration


def plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    return str(value) if value.__class__.__name__ == "UUID" else value


def bucket(epoch: Any) -> datetime:
    return datetime.fromtimestamp(float(epoch), UTC)


def series(rows: list[tuple]) -> list[tuple]:
    """Long-format time series rows with the epoch bucket as a datetime."""
    return [(bucket(r[0]), *r[1:]) for r in rows]


def close(actual: list[tuple], expected: list[tuple]) -> bool:
    return len(actual) == len(expected) and all(
        len(a) == len(e)
        and all(
            x == pytest.approx(y) if isinstance(y, float) else x == y
            for x, y in zip(a, e, strict=True)
        )
        for a, e in zip(actual, expected, strict=True)
    )


# (dashboard uid, panel title) → (columns, rows in order; time buckets as datetimes)
EXPECTED: dict[tuple[str, str], tuple[list[str], list[tuple]]] = {
    ("research-pipeline", "Tasks by tier and status"): (
        ["tier", "status", "tasks"],
        [
            ("batched", "queued", 1),
            ("batched", "researching", 1),
            ("emergency", "claimed", 2),
            ("priority", "claimed", 1),
            ("priority", "failed", 1),
        ],
    ),
    ("research-pipeline", "Task → first verdict latency (seconds)"): (
        ["time", "p50", "p95", "p99"],
        [(at("01-09 10:00"), 120.0, 282.0, 296.4)],
    ),
    ("research-pipeline", "Claims created, by current status"): (
        ["time", "metric", "claims"],
        [
            (at("01-09 10:00"), "active", 2),
            (at("01-09 10:00"), "rejected", 1),
            (at("01-09 13:00"), "critic_quarantine", 1),
            (at("01-09 14:00"), "pending", 1),
        ],
    ),
    ("research-pipeline", "Ledger now, by status"): (
        ["status", "claims"],
        [
            ("active", 2),
            ("critic_quarantine", 1),
            ("pending", 1),
            ("rejected", 1),
            ("superseded", 1),
        ],
    ),
    ("research-pipeline", "Verdict mix"): (
        ["verdict", "verdicts"],
        [("promote", 2), ("reject", 1), ("supersede", 1)],
    ),
    ("research-pipeline", "Critic quarantine"): (
        ["quarantined_now", "timeouts", "quarantined", "drained"],
        [(1, 3, 1, 0)],
    ),
    ("research-pipeline", "Dead letters per subject"): (
        ["time", "metric", "dead_letters"],
        [
            (at("01-09 11:00"), "research.task.priority", 2),
            (at("01-09 12:00"), "research.claim.pending", 1),
        ],
    ),
    ("research-pipeline", "Latest dead letters"): (
        ["time", "service", "subject", "reason"],
        [
            (at("01-09 12:00"), "critic", "research.claim.pending", "unknown claim"),
            (at("01-09 11:30"), "researcher", "research.task.priority", "invalid json"),
            (at("01-09 11:00"), "researcher", "research.task.priority", "invalid json"),
        ],
    ),
    ("research-agents", "Runs per agent and outcome"): (
        ["time", "metric", "runs"],
        [
            (at("01-05 00:00"), "correlator completed", 1),
            (at("01-06 00:00"), "correlator completed", 1),
            (at("01-07 00:00"), "correlator completed", 1),
            (at("01-08 00:00"), "replicator failed", 1),
            (at("01-09 00:00"), "librarian abandoned", 1),
            (at("01-09 00:00"), "librarian completed", 2),
            (at("01-09 00:00"), "librarian running", 1),
        ],
    ),
    ("research-agents", "Run durations (seconds)"): (
        ["agent", "runs", "p50_s", "p95_s", "max_s"],
        [
            ("correlator", 3, 20.0, 29.0, 30.0),
            ("librarian", 3, 2.0, 3.8, 4.0),
            ("replicator", 1, 5.0, 5.0, 5.0),
        ],
    ),
    ("research-agents", "Outcomes"): (
        ["agent", "outcome", "runs"],
        [
            ("correlator", "completed", 3),
            ("librarian", "abandoned", 1),
            ("librarian", "completed", 2),
            ("librarian", "running", 1),
            ("replicator", "failed", 1),
        ],
    ),
    ("research-agents", "Findings per kind per day"): (
        ["time", "metric", "findings"],
        [
            (at("01-04 00:00"), "librarian/approaching_decay", 1),
            (at("01-05 00:00"), "correlator/co_occurrence", 1),
            (at("01-08 00:00"), "replicator/eroded", 1),
            (at("01-09 00:00"), "correlator/co_occurrence", 1),
            (at("01-09 00:00"), "librarian/broken_provenance", 1),
        ],
    ),
    ("research-agents", "Findings: 24 h window and open"): (
        ["agent", "last_24h", "open"],
        [("correlator", 1, 1), ("librarian", 1, 2), ("replicator", 0, 0)],
    ),
    ("research-agents", "Failed and abandoned runs"): (
        ["time", "agent", "trigger", "outcome", "error"],
        [
            (
                at("01-09 12:00"),
                "librarian",
                "schedule",
                "abandoned",
                "its process stopped without finishing it",
            ),
            (
                at("01-08 00:00"),
                "replicator",
                "schedule",
                "failed",
                "ConnectionError: connector timed out",
            ),
        ],
    ),
    ("research-agents", "Agent decisions (audit)"): (
        ["time", "metric", "events"],
        [
            (at("01-05 00:00"), "research.correlator.finding", 2),
            (at("01-06 00:00"), "research.correlator.no_pattern", 3),
            (at("01-09 00:00"), "research.librarian.finding", 1),
            (at("01-09 00:00"), "research.librarian.resolved", 1),
        ],
    ),
    ("research-sources", "Degradations per source"): (
        ["time", "metric", "degraded"],
        [
            (at("01-09 10:00"), "pubmed", 2),
            (at("01-09 11:00"), "pubmed", 1),
            (at("01-09 12:00"), "crossref", 1),
            (at("01-09 12:00"), "openalex", 1),
        ],
    ),
    ("research-sources", "Degradations by source: 429s, 5xx, timeouts"): (
        ["source", "degraded", "rate_limited", "server_errors", "timeouts", "last_seen"],
        [
            ("pubmed", 3, 2, 0, 1, at("01-09 11:00")),
            ("crossref", 1, 0, 1, 0, at("01-09 12:00")),
            ("openalex", 1, 0, 0, 1, at("01-09 12:30")),
        ],
    ),
    ("research-sources", "Queries refused for personal identifiers"): (
        ["source", "refused"],
        [("pubmed", 1)],
    ),
    ("research-sources", "Cache entries per source"): (
        ["source", "live", "expired"],
        [("crossref", 1, 0), ("pubmed", 3, 1)],
    ),
    ("research-modes", "Mode events per day"): (
        ["time", "metric", "events"],
        [
            (at("01-07 00:00"), "research.review.completed", 2),
            (at("01-07 00:00"), "research.review.requested", 2),
            (at("01-08 00:00"), "research.review.stale", 1),
            (at("01-08 00:00"), "research.sourcelist.completed", 1),
            (at("01-08 00:00"), "research.verification.completed", 3),
            (at("01-09 00:00"), "research.sourcelist.completed", 1),
            (at("01-09 00:00"), "research.verification.verdict_changed", 1),
        ],
    ),
    ("research-modes", "Durations by mode (seconds)"): (
        ["mode", "completed", "p50_s", "p95_s"],
        [("review", 2, 60.0, 78.0), ("sourcelist", 2, 6.0, 6.9), ("verification", 3, 20.0, 29.0)],
    ),
    ("research-modes", "Peer review PASS rate"): (
        ["reviews", "passed", "pass_rate"],
        [(2, 1, 0.5)],
    ),
    ("research-modes", "Verification verdicts"): (
        ["verdict", "verifications"],
        [("MIXED EVIDENCE", 1), ("STRONGLY SUPPORTED", 2)],
    ),
    ("research-modes", "Stale reviews"): (
        ["time", "review_id", "claim_id", "reason"],
        [(at("01-08 08:00"), "rev-1", str(C1), "claim superseded")],
    ),
    ("research-modes", "Verdict changes of watched claims"): (
        ["time", "claim_id", "previous", "verdict"],
        [(at("01-09 07:00"), str(C2), "STRONGLY SUPPORTED", "MIXED EVIDENCE")],
    ),
    ("research-modes", "Source lists: runs and new sources"): (["runs", "new_sources"], [(2, 3)]),
    ("research-audit", "Events per action"): (
        ["time", "metric", "events"],
        [
            (at("01-09 20:00"), "research.admin.control", 1),
            (at("01-09 21:00"), "research.claim.proposed", 1),
            (at("01-09 22:00"), "research.claim.promoted", 1),
        ],
    ),
}
ALL_ACTIONS = sorted({row[2] for row in AUDIT})
ALL_SERVICES = sorted({row[1] for row in AUDIT})


async def run(conn: asyncpg.Connection, sql: str) -> tuple[list[str], list[tuple]]:
    statement = await conn.prepare(sql)
    rows = await statement.fetch()
    columns = [a.name for a in statement.get_attributes()]
    return columns, [tuple(plain(v) for v in row) for row in rows]


def test_every_panel_is_expected() -> None:
    found = {(p.dashboard, p.title) for p in sql_panels()} - {("research-audit", "Events")}
    assert found == set(EXPECTED), (
        "a SQL panel without an expectation (or an expectation without a panel)"
    )
    assert set(dashboards()) == {
        "research-pipeline",
        "research-agents",
        "research-sources",
        "research-modes",
        "research-audit",
    }


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: f"{k[0]}:{k[1]}")
async def test_panel_shows_the_seeded_ledger(
    reader: asyncpg.Connection, key: tuple[str, str]
) -> None:
    (panel,) = [p for p in sql_panels() if (p.dashboard, p.title) == key]
    variables = await explorer_variables(reader) if panel.dashboard == "research-audit" else None
    columns, rows = await run(reader, render(panel, END, variables))
    want_columns, want_rows = EXPECTED[key]
    assert columns == want_columns
    if columns[0] == "time" and rows and not isinstance(rows[0][0], datetime):
        rows = series(rows)
    assert close(rows, want_rows), rows


async def test_audit_explorer_filters_by_action_service_task_and_claim(
    reader: asyncpg.Connection,
) -> None:
    assert await variable_values(reader, "research-audit", "action") == ALL_ACTIONS
    assert await variable_values(reader, "research-audit", "service") == ALL_SERVICES
    (events,) = [p for p in sql_panels() if p.title == "Events"]

    async def shown(**chosen: list[str]) -> list[tuple]:
        columns, rows = await run(
            reader, render(events, END, await explorer_variables(reader, **chosen))
        )
        assert columns == [
            "time",
            "service",
            "action",
            "task_id",
            "claim_id",
            "subjects",
            "payload",
        ]
        return [(r[0], r[1], r[2]) for r in rows]

    everything = await shown()
    assert everything == [
        (at("01-09 22:00"), "critic", "research.claim.promoted"),
        (at("01-09 21:00"), "researcher", "research.claim.proposed"),
        (at("01-09 20:00"), "gateway", "research.admin.control"),
    ]
    assert await shown(service=["gateway"]) == everything[2:]
    assert await shown(task_id=[str(T1)]) == everything[:2]
    assert await shown(claim_id=[str(C1)], action=["research.claim.proposed"]) == everything[1:2]


async def test_explorer_text_filters_are_quoted(reader: asyncpg.Connection) -> None:
    """A quote typed into the task box stays inside the string literal (and fails the uuid cast)."""
    (events,) = [p for p in sql_panels() if p.title == "Events"]
    sql = render(events, END, await explorer_variables(reader, task_id=["x' OR '1'='1"]))
    assert "'x'' OR ''1''=''1'" in sql
    with pytest.raises(asyncpg.InvalidTextRepresentationError):
        await reader.fetch(sql)


async def test_reader_role_is_read_only_and_blind_to_api_keys(reader: asyncpg.Connection) -> None:
    assert await reader.fetchval("SELECT current_user") == "grafana_reader"
    assert await reader.fetchval("SHOW default_transaction_read_only") == "on"
    with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
        await reader.execute(
            "INSERT INTO audit_events (service, action, subject_ids, payload) VALUES ('x', 'y', '{}', '{}')"
        )
    async with reader.transaction(readonly=False):
        await reader.execute("SET TRANSACTION READ WRITE")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await reader.execute(
                "INSERT INTO audit_events (service, action, subject_ids, payload) VALUES ('x', 'y', '{}', '{}')"
            )
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await reader.fetch("SELECT key_hash FROM api_keys")


def provisioned() -> dict[str, str]:
    """uid → type of every provisioned data source."""
    path = REPO / "deploy" / "grafana" / "provisioning" / "datasources" / "datasources.yml"
    return {d["uid"]: d["type"] for d in yaml.safe_load(path.read_text())["datasources"]}


def test_panels_use_provisioned_datasources() -> None:
    sources = provisioned()
    for uid, board in dashboards().items():
        for panel, target in targets(board):
            for ref in (panel["datasource"], target["datasource"]):
                assert sources.get(ref["uid"]) == ref["type"], f"{uid}: {panel['title']} uses {ref}"
        for var in board.get("templating", {}).get("list", []):
            if "datasource" in var:
                assert sources.get(var["datasource"]["uid"]) == var["datasource"]["type"]


def test_multi_value_variables_expand_quoted() -> None:
    board = dashboards()["research-audit"]
    assert multi_variables(board) == {"action", "service"}
    from bench.harness.grafana_macros import TimeRange

    span = TimeRange(at("01-09 00:00"), END, "5m", {"action": ["a", "b'c"], "service": ["s"]})
    assert (
        expand("x IN ($action) AND y IN (${service})", span, {"action", "service"})
        == "x IN ('a','b''c') AND y IN ('s')"
    )
    assert (
        expand("$__timeGroupAlias(t, $__interval)", span)
        == 'floor(extract(epoch from t)/300)*300 AS "time"'
    )
    assert (
        expand("$__timeFilter(t)", span)
        == "t BETWEEN '2030-01-09T00:00:00Z' AND '2030-01-10T00:00:00Z'"
    )
    with pytest.raises(ValueError, match="unknown Grafana macro"):
        expand("$__timeGroupz(t)", span)
