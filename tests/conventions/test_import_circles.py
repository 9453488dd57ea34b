"""No import circle between the modules of one package, deferred imports counted: every `import`
and `from … import` anywhere in a module (inside functions too) is an edge to the module it names;
imports under `if TYPE_CHECKING:` are left out (they never run). A circle is a strongly connected
set of two or more modules, or a module importing itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = [
    *sorted(REPO.glob("libs/*/src")),
    *sorted(REPO.glob("services/*/src")),
    REPO / "src",
]


def packages() -> dict[str, Path]:
    """Every top-level package of the source roots, by name."""
    found = {}
    for root in SOURCE_ROOTS:
        for init in sorted(root.glob("*/__init__.py")):
            found[init.parent.name] = init.parent
    return found


def module_names(package: Path) -> dict[str, Path]:
    """The package's modules by dotted name (a sub-package by its own name, for its __init__)."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(tree: ast.Module, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of `modules` this module imports at run time: `import a.b` gives `a.b`;
    `from a import b` gives `a.b` when that is a module, else `a` (a name of its __init__)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                found.add(
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found & modules


def graph(package: Path) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports at run time."""
    modules = module_names(package)
    edges = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges[name] = imported(tree, name, path.name == "__init__.py", set(modules))
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan), and self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_no_package_has_an_import_circle() -> None:
    found = {name: c for name, root in packages().items() if (c := circles(graph(root)))}
    assert found == {}


def test_a_deferred_import_closes_a_circle_and_a_type_checking_one_does_not(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import run\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.c import C\n"
        "def run():\n    from . import a\n"
    )
    (package / "c.py").write_text("import pkg.b\n")
    assert graph(package) == {
        "pkg": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.a"},
        "pkg.c": {"pkg.b"},
    }
    assert circles(graph(package)) == [["pkg.a", "pkg.b"]]
