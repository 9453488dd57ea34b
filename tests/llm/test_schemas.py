"""Every JSON schema an engine sends a model is one a small model can satisfy: every array bounded
(`maxItems`), every string bounded (`maxLength`) or an `enum`, every object closed and fully
required. The schemas are found by walking the source: each `.ask(prompt, Shape, "name")` and
`.answer(prompt, Shape, "name")` call in libs/, services/ and src/ — a new engine's schema is
checked without being listed here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from research_llm.providers.remote import strict_schema

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def sent_schemas() -> dict[str, type[BaseModel]]:
    """schema name → pydantic model, for every schema-bound question in the code."""
    found: dict[str, type[BaseModel]] = {}
    for src in [*ROOT.glob("libs/*/src"), *ROOT.glob("services/*/src"), ROOT / "src"]:
        for path in src.rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            calls = [
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"ask", "answer"}
                and len(node.args) >= 3
                and isinstance(node.args[1], ast.Name)
                and isinstance(node.args[2], ast.Constant)
                and isinstance(node.args[2].value, str)
            ]
            if not calls:
                continue
            module = importlib.import_module(".".join(path.relative_to(src).with_suffix("").parts))
            for call in calls:
                name, schema = call.args[1], call.args[2]
                assert isinstance(name, ast.Name) and isinstance(schema, ast.Constant)
                assert isinstance(schema.value, str)
                shape = getattr(module, name.id)
                assert isinstance(shape, type) and issubclass(shape, BaseModel), (path, name.id)
                found[schema.value] = shape
    return found


def unbounded(schema: dict[str, Any]) -> list[str]:
    """Where `schema` lets a model write without end (or leave the object open)."""
    problems: list[str] = []

    def visit(node: Any, where: str) -> None:
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "array" and "maxItems" not in node:
                problems.append(f"{where}: array without maxItems")
            if kind == "string" and "maxLength" not in node and "enum" not in node:
                problems.append(f"{where}: string without maxLength or enum")
            if kind == "object" and "properties" in node:
                if node.get("additionalProperties") is not False:
                    problems.append(f"{where}: object open to extra properties")
                if set(node.get("required", [])) != set(node["properties"]):
                    problems.append(f"{where}: optional properties")
            for key, value in node.items():
                visit(value, f"{where}.{key}")
        elif isinstance(node, list):
            for n, item in enumerate(node):
                visit(item, f"{where}[{n}]")

    visit(schema, "$")
    return problems


def test_the_walk_finds_every_engines_schema() -> None:
    names = set(sent_schemas())
    assert {
        "claim_draft",
        "critic_verdict",  # researcher, critic
        "pattern_confirmation",  # correlator
        "review_findings",  # reviewer author and revisions
        "verification_labels",  # verifier
        "scout_judgement",
        "scout_refined_query",
        "scout_facts",  # scout
    } <= names


@pytest.mark.parametrize("name", sorted(sent_schemas()))
def test_every_sent_schema_is_bounded(name: str) -> None:
    shape = sent_schemas()[name]
    assert unbounded(strict_schema(shape)) == [], name
    # OpenAI's strict mode takes no string lengths; arrays stay bounded there too
    assert [p for p in unbounded(strict_schema(shape, lengths=False)) if "array" in p] == [], name


def test_the_check_catches_an_unbounded_schema() -> None:
    class Loose(BaseModel):
        items: list[str]
        note: str = Field(default="")

    assert set(unbounded(strict_schema(Loose))) == {
        "$.properties.items: array without maxItems",
        "$.properties.items.items: string without maxLength or enum",
        "$.properties.note: string without maxLength or enum",
    }


def test_a_label_is_an_enum_in_the_schema_but_read_leniently() -> None:
    """The verifier's and reviewer's labels: the grammar allows only the enum; a model that ignores
    the schema loses that one item (dropped and counted by the engine), not its whole answer."""
    from research_reviewer.llm_author import FindingAnswer
    from research_verifier.llm import PassageLabel

    label = strict_schema(PassageLabel)["properties"]["label"]
    assert label["enum"] == ["SUPPORTS", "CONTRADICTS", "QUALIFIES", "UNRELATED"]
    assert (
        PassageLabel(paper_id="corpus:1", label="MAYBE", strength=0.5, sentence="x").label
        == "MAYBE"
    )
    assert strict_schema(FindingAnswer)["properties"]["tag"]["enum"] == [
        "SUPPORTED",
        "CONTESTED",
        "INSUFFICIENT",
    ]
