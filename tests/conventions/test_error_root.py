"""Every error research-engine raises on purpose is a `ResearchEngineError`, whose one class lives
in `research_contracts.errors` (the platform re-exports it); errors that were `RuntimeError`s stay
catchable as such."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from research_client import ApiError
from research_contracts.errors import ResearchEngineError
from research_corpus.errors import CorpusError
from research_judgement.errors import JudgementError, WeightsUnavailable
from research_ledger.errors import AuditPayloadError
from research_llm.errors import DoesNotFit, LLMError
from research_modes.errors import SourcesDown, ToolsUnavailable
from research_platform import errors as platform_errors
from research_platform.errors import EmbeddedServerError
from research_verification.errors import ClaimParseError, VerificationError

pytestmark = pytest.mark.unit


def test_every_library_error_base_is_under_the_root() -> None:
    assert platform_errors.ResearchEngineError is ResearchEngineError
    for base in (
        LLMError,
        VerificationError,
        ApiError,
        EmbeddedServerError,
        WeightsUnavailable,
        JudgementError,
        SourcesDown,
        ToolsUnavailable,
        DoesNotFit,
        CorpusError,
        AuditPayloadError,
        platform_errors.PrepareError,
        platform_errors.TransientError,
    ):
        assert issubclass(base, ResearchEngineError), base


def test_the_errors_keep_their_other_bases() -> None:
    assert issubclass(EmbeddedServerError, RuntimeError)
    assert issubclass(WeightsUnavailable, RuntimeError)
    assert issubclass(ClaimParseError, ValueError)
    assert issubclass(DoesNotFit, ValueError)
    assert issubclass(AuditPayloadError, ValueError)
    assert issubclass(ToolsUnavailable, platform_errors.TransientError)
    error = ApiError(403, "forbidden", method="GET", path="/claims", key_from="RESEARCH_API_KEY")
    assert str(error) == "GET /claims → 403: forbidden (key from RESEARCH_API_KEY)"
    with pytest.raises(ResearchEngineError):
        raise error


BUILTIN_BASES = {"Exception", "ValueError", "RuntimeError", "LookupError", "KeyError", "TypeError"}
# error classes that live outside an `errors` module, each with why
OUTSIDE_ERRORS_MODULES = {
    "research_text/wordlists.py:UnknownWordList": "research_text is below the contracts",
}


def test_every_library_error_is_declared_in_its_errors_module() -> None:
    """An error class of a library (any class whose bases name an exception) lives in that
    library's `errors` module, private control-flow signals (`_TooLarge`) aside."""
    repo = Path(__file__).resolve().parents[2]
    trees = {
        path: ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(repo.glob("libs/*/src/*/**/*.py"))
    }
    names = set(BUILTIN_BASES)
    for _ in range(4):  # error classes deriving from other error classes, to the fixpoint
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and {_base(b) for b in node.bases} & names:
                    names.add(node.name)
    outside = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ClassDef)
                and {_base(b) for b in node.bases} & names
                and not node.name.startswith("_")
                and path.name != "errors.py"
            ):
                place = f"{path.parent.name}/{path.name}:{node.name}"
                if place not in OUTSIDE_ERRORS_MODULES:
                    outside.append(place)
    assert outside == []


def _base(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
