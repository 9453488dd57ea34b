"""Load the provisioned Grafana dashboards and turn each SQL panel into the SQL Grafana would run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from bench.harness.grafana_macros import TimeRange, expand, relative_start

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "deploy" / "grafana" / "dashboards"
POSTGRES_TYPE = "grafana-postgresql-datasource"
# The interval Grafana picks for ~1,000 px wide panels over each default range.
INTERVAL = {"now-6h": "10m", "now-24h": "1h", "now-7d": "1d", "now-30d": "1d"}


@dataclass(frozen=True)
class SqlPanel:
    dashboard: str  # uid
    title: str
    raw_sql: str
    time_from: str  # the dashboard's default, e.g. "now-24h"

    def span(self, now: datetime, variables: dict[str, list[str]] | None = None) -> TimeRange:
        return TimeRange(
            relative_start(self.time_from, now), now, INTERVAL[self.time_from], variables or {}
        )


def dashboards() -> dict[str, dict[str, Any]]:
    """uid → dashboard JSON, for every file Grafana's provider would load."""
    found = {}
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        found[board["uid"]] = board
    return found


def targets(board: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            yield panel, target


def sql_panels() -> list[SqlPanel]:
    return [
        SqlPanel(uid, panel["title"], target["rawSql"], board["time"]["from"])
        for uid, board in dashboards().items()
        for panel, target in targets(board)
        if target["datasource"]["type"] == POSTGRES_TYPE
    ]


def multi_variables(board: dict[str, Any]) -> set[str]:
    return {
        v["name"]
        for v in board.get("templating", {}).get("list", [])
        if v.get("multi") or v.get("includeAll")
    }


def render(panel: SqlPanel, now: datetime, variables: dict[str, list[str]] | None = None) -> str:
    board = dashboards()[panel.dashboard]
    return expand(panel.raw_sql, panel.span(now, variables), multi_variables(board))


def plain_dsn(url: str, database: str, user: str | None = None, password: str | None = None) -> str:
    """The asyncpg DSN of `url` (a SQLAlchemy URL) pointed at `database`, optionally as `user`."""
    parts = urlsplit(url.replace("postgresql+asyncpg://", "postgresql://"))
    who = parts.username or "postgres"
    secret = parts.password
    if user is not None:
        who, secret = user, password
    auth = who + (f":{secret}" if secret else "")
    return f"postgresql://{auth}@{parts.hostname}:{parts.port}/{database}"


async def variable_values(conn: asyncpg.Connection, uid: str, name: str) -> list[str]:
    """What a query variable offers, i.e. what "All" expands to."""
    board = dashboards()[uid]
    (var,) = [v for v in board["templating"]["list"] if v["name"] == name]
    return [row[0] for row in await conn.fetch(var["query"])]


async def explorer_variables(conn: asyncpg.Connection, **chosen: list[str]) -> dict[str, list[str]]:
    values = {
        "action": await variable_values(conn, "research-audit", "action"),
        "service": await variable_values(conn, "research-audit", "service"),
        "task_id": [""],
        "claim_id": [""],
    }
    return values | chosen
