"""Every audit write goes through the catalogue: a scan of the source tree plus the writer's own checks."""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path

import pytest

from research_ledger import AuditAction, payload_schema
from research_ledger.audit import checked_payload, record, storable
from research_ledger.errors import AuditPayloadError

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
ACTION_KEYWORDS = {"action", "opened_action", "resolved_action"}
# The only place that may build audit rows itself: the writer (`record`, `record_many`).
RAW_WRITERS = {"libs/ledger/src/research_ledger/audit.py"}
LEDGER_MODELS = {"ResearchTask", "MemoryClaim", "CriticVerdictRow"}
# Calls whose `action=` keyword means something else (argparse: action="store_true").
NOT_AUDIT_CALLS = {"add_argument"}


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def violations(source: str, where: str) -> list[str]:
    """Audit writes in `source` that bypass the catalogue (a string action, a hand-built row)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if name in NOT_AUDIT_CALLS:
            continue
        for keyword in node.keywords:
            if keyword.arg in ACTION_KEYWORDS and _is_string(keyword.value):
                found.append(
                    f"{where}:{node.lineno} {keyword.arg}= is a string, not an AuditAction"
                )
        if name in {"record", "audit", "Entry"} and any(_is_string(arg) for arg in node.args[:2]):
            found.append(f"{where}:{node.lineno} {name}() called with a string action")
        if where not in RAW_WRITERS and (
            name == "AuditEvent"
            or (name == "insert" and any(getattr(a, "id", "") == "AuditEvent" for a in node.args))
        ):
            found.append(
                f"{where}:{node.lineno} builds an AuditEvent outside research_ledger.audit"
            )
        if not where.startswith("libs/ledger/") and (
            name in LEDGER_MODELS
            or (
                name in {"insert", "update"}
                and any(getattr(a, "id", "") in LEDGER_MODELS for a in node.args)
            )
        ):
            found.append(f"{where}:{node.lineno} writes a ledger table outside research_ledger")
    if where not in RAW_WRITERS and re.search(
        r"insert\s+into\s+audit_events", source, re.IGNORECASE
    ):
        found.append(f"{where}: inserts into audit_events with raw SQL")
    return found


def _tree() -> list[Path]:
    roots = [*REPO.glob("libs/*/src"), *REPO.glob("services/*/src"), REPO / "src"]
    return sorted(p for root in roots for p in root.rglob("*.py"))


def test_no_code_writes_an_action_outside_the_catalogue() -> None:
    files = _tree()
    assert len(files) > 50  # the scan really walks the tree
    found = [v for path in files for v in violations(path.read_text(), str(path.relative_to(REPO)))]
    assert found == []


def test_the_scan_catches_a_string_action() -> None:
    bad = 'audit.record(session, service="x", action="research.made.up")\nledger.audit("research.made.up")\n'
    assert len(violations(bad, "services/x/src/x.py")) == 2
    assert violations(
        "session.add(AuditEvent(action=AuditAction.TASK_FAILED))", "services/x/src/x.py"
    )
    assert violations('text("INSERT INTO audit_events (action) VALUES (1)")', "services/x/src/x.py")
    assert violations("await session.execute(insert(AuditEvent), rows)", "libs/agents/src/x.py")
    assert violations('audit.Entry("research.made.up", claim_id=c)', "libs/agents/src/x.py")
    assert (
        violations(
            "audit.record(session, AuditAction.TASK_FAILED, service='x')", "services/x/src/x.py"
        )
        == []
    )
    assert violations('parser.add_argument("--check", action="store_true")', "src/x.py") == []
    assert violations(
        "await session.execute(update(MemoryClaim).values(status='active'))", "services/x/src/x.py"
    )


def test_every_action_has_a_schema_and_a_line_in_the_architecture_page() -> None:
    catalogue = (REPO / "docs" / "architecture.md").read_text()
    for action in AuditAction:
        assert payload_schema(action) is not None
        assert f"`{action.value}`" in catalogue, (
            f"{action.value} is not listed in docs/architecture.md's audit catalogue"
        )


def test_the_writer_refuses_a_string_action_and_a_wrong_payload() -> None:
    with pytest.raises(TypeError):
        record(None, "research.task.failed", service="test", payload={"reason": "x"})  # type: ignore[arg-type]  # the wrong type is what is refused
    with pytest.raises(AuditPayloadError):
        checked_payload(AuditAction.TASK_FAILED, {"why": "no reason field"})
    with pytest.raises(AuditPayloadError):  # a dead-letter row never carries the body
        checked_payload(
            AuditAction.CONSUMER_DEAD_LETTER,
            {"reason": "r", "sha256": "0" * 64, "size": 3, "body": "abc"},
        )


def test_nul_and_lone_surrogates_become_storable() -> None:
    hostile = "a\x00b\ud800c" + b"\xff".decode("utf-8", "surrogateescape")
    cleaned = checked_payload(AuditAction.TASK_FAILED, {"reason": hostile})
    assert cleaned == {"reason": "a\ufffdb\ufffdc\ufffd"}
    assert storable({"k\x00": [uuid.UUID(int=1), b"\x00"]}) == {
        "k\ufffd": [str(uuid.UUID(int=1)), "\ufffd"]
    }
    cleaned["reason"].encode("utf-8")  # encodable: asyncpg and jsonb accept it
