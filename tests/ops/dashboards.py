"""Load the provisioned Grafana dashboards and turn each SQL panel into the SQL Grafana would run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.ops.grafana_macros import TimeRange, expand, relative_start

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
