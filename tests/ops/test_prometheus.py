"""Prometheus scrapes every service replica and NATS through its exporter; dashboard PromQL parses.

`promtool` (Debian's `prometheus` package) checks the configuration and, through a throwaway
rules file, every PromQL expression of the dashboards. Without promtool those two tests skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from bench.harness.dashboards import REPO, dashboards, targets

pytestmark = pytest.mark.unit

PROMETHEUS = REPO / "deploy" / "prometheus"
CONFIG = PROMETHEUS / "prometheus.yml"
APP_IMAGE = "research-engine:local"


def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def app_services() -> dict[str, dict]:
    return {
        name: svc
        for name, svc in compose()["services"].items()
        if svc.get("image") == APP_IMAGE
        and "command" in svc
        and svc["command"][:2] == ["python", "-m"]
    }


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not installed (Debian: apt-get install prometheus)")
    return found


def promql() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for board in dashboards().values()
        for panel, target in targets(board)
        if target["datasource"]["type"] == "prometheus"
    ]


def test_promtool_accepts_the_config() -> None:
    result = subprocess.run(
        [promtool(), "check", "config", str(CONFIG)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_promql_parses(tmp_path: Path) -> None:
    """Grafana's $__rate_interval becomes a literal range so promtool can parse each expression."""
    rules = [
        {
            "record": f"dashboard:panel_{i}",
            "expr": expr.replace("$__rate_interval", "1m").replace("$__interval", "1m"),
        }
        for i, (_, expr) in enumerate(promql())
    ]
    assert rules, "the dashboards have Prometheus panels"
    path = tmp_path / "panels.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    result = subprocess.run(
        [promtool(), "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboards_read_only_the_listed_metrics() -> None:
    listed = {
        line.split()[0]
        for line in (PROMETHEUS / "dashboard-metrics.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    used = set()
    for _, expr in promql():
        for name in re.findall(r"\b(research_[a-z_]+)\b", expr):
            used.add(re.sub(r"_(bucket|sum|count)$", "", name))
    assert used == listed


def test_every_service_replica_is_discovered_on_its_metrics_port() -> None:
    jobs = {job["job_name"]: job for job in yaml.safe_load(CONFIG.read_text())["scrape_configs"]}
    services = app_services()
    assert set(services) >= {
        p.name for p in (REPO / "services").iterdir() if (p / "pyproject.toml").exists()
    }
    ports = set()
    for name, svc in services.items():
        port = int(svc["environment"]["METRICS_PORT"])
        ports.add(port)
        (sd,) = jobs[name]["dns_sd_configs"]  # DNS answers with every replica's address
        assert sd["names"] == [name] and sd["type"] == "A" and sd["port"] == port
    assert len(ports) == len(services), "each service has its own metrics port"


def test_nats_is_scraped_through_the_official_exporter() -> None:
    jobs = {job["job_name"]: job for job in yaml.safe_load(CONFIG.read_text())["scrape_configs"]}
    assert all(job.get("metrics_path", "/metrics") == "/metrics" for job in jobs.values()), (
        "no JSON /varz scraping"
    )
    exporter = compose()["services"]["nats-exporter"]
    assert exporter["image"].startswith("natsio/prometheus-nats-exporter:")
    assert "-jsz=all" in exporter["command"] and exporter["command"][-1] == "http://nats:8222"
    assert "--http_port" in compose()["services"]["nats"]["command"]
    assert jobs["nats"]["static_configs"] == [{"targets": ["nats-exporter:7777"]}]
