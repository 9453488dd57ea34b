"""Export the API documents into `docs/`: the gateway's OpenAPI and every service's AsyncAPI.

    .venv/bin/task docs:export          # writes docs/openapi.json and docs/asyncapi/<service>.json
    .venv/bin/python -m research_engine.docs_export --check   # exit 1 when docs/ is stale

The documents are generated from the code (FastAPI for the HTTP routes, FastStream for the
subjects each service consumes and publishes, with their pydantic payload schemas), by
building each app without connecting to anything. tests/ops/test_docs_current.py regenerates
them and fails when a committed file differs, so the docs move with the code.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import typing
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# Built only, never started: no server is reached at these addresses.
OFFLINE = {
    "nats_url": "nats://127.0.0.1:4222",
    "database_url": "postgresql+asyncpg://research@127.0.0.1:5432/research",
}
VERSION = "0.1.0"


# The gateway's FastStream side (what it publishes) is in `bus.py`; its `main.py` is the FastAPI app.
APP_MODULE = {"gateway": "bus"}


def services() -> list[str]:
    """Every service with a FastStream app (`research_<name>.main.create_app`; the gateway's `bus.create_app`)."""
    return sorted(
        p.name
        for p in (REPO / "services").iterdir()
        if (p / "pyproject.toml").exists()
        and (p / "src" / f"research_{p.name}" / f"{APP_MODULE.get(p.name, 'main')}.py").exists()
    )


def _settings_for(create_app: Any) -> Any:
    """The settings root `create_app` is annotated with, built with the offline addresses."""
    kind = typing.get_type_hints(create_app)["settings"]
    kind = next((k for k in typing.get_args(kind) if k is not type(None)), kind)  # `X | None` → X
    return kind(_env_file=None, **OFFLINE)


def openapi() -> dict[str, Any]:
    from research_gateway.main import create_app

    return create_app(_settings_for(create_app)).openapi()


def asyncapi(service: str) -> dict[str, Any]:
    from faststream.specification import AsyncAPI

    module = importlib.import_module(f"research_{service}.{APP_MODULE.get(service, 'main')}")
    app = module.create_app(_settings_for(module.create_app))
    spec = AsyncAPI(
        app.broker,
        title=f"research-engine {service}",
        version=VERSION,
        description=(module.__doc__ or "").strip() or None,
    )
    document: dict[str, Any] = json.loads(spec.to_specification().to_json())
    return document


def documents() -> dict[Path, str]:
    """Every document as the text `docs:export` writes (sorted keys, stable across runs)."""

    def text(value: dict[str, Any]) -> str:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    found = {DOCS / "openapi.json": text(openapi())}
    for service in services():
        found[DOCS / "asyncapi" / f"{service}.json"] = text(asyncapi(service))
    return found


def stale(found: dict[Path, str]) -> list[Path]:
    """Documents whose committed file is missing or differs, and files no service produces any more."""
    changed = [
        path for path, body in found.items() if not path.is_file() or path.read_text() != body
    ]
    orphans = (
        [p for p in (DOCS / "asyncapi").glob("*.json") if p not in found]
        if (DOCS / "asyncapi").is_dir()
        else []
    )
    return changed + orphans


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="Only report stale files (exit 1), write nothing."
    )
    args = parser.parse_args(argv)
    found = documents()
    outdated = stale(found)
    if args.check:
        for path in outdated:
            print(f"stale: {path.relative_to(REPO)}")
        return 1 if outdated else 0
    for path in outdated:
        if path in found:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(found[path])
            print(f"wrote {path.relative_to(REPO)}")
        else:
            path.unlink()
            print(f"removed {path.relative_to(REPO)}")
    print(f"{len(found)} documents, {len(outdated)} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
