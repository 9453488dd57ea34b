"""Configuration is passed in, not pulled: no library reads the environment's settings itself.

Below the entry points (service `main.py`, the CLI, benchmarks) nothing calls `get_settings()`
or instantiates a `BaseSettings` class (which reads the environment and `.env`): a library takes
its settings section as an argument, so it reads the values of the service that started it. The
walk covers `libs/*/src`, AST by AST; what it allows is named below with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
LIBS = sorted(REPO.glob("libs/*/src"))
SOURCES = [*LIBS, *sorted(REPO.glob("services/*/src")), REPO / "src"]
ALLOWED = {
    # the settings module itself: `get_settings` is defined there, for the entry points
    "research_platform/settings.py",
    # the client library is a user's program's own door to its configuration: its settings
    # module, and `credentials.resolve`, which reads them afresh on every call (documented)
    "research_client/settings.py",
    "research_client/credentials.py",
}


def settings_classes() -> set[str]:
    """Names of every `BaseSettings` subclass in the source roots (by base name, to a fixed point)."""
    bases: dict[str, set[str]] = {}
    for root in SOURCES:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    bases.setdefault(node.name, set()).update(
                        b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                        for b in node.bases
                    )
    found = {"BaseSettings"}
    while True:
        more = {name for name, named in bases.items() if named & found} - found
        if not more:
            return found - {"BaseSettings"}
        found |= more


def _main_block(node: ast.AST) -> bool:
    """`if __name__ == "__main__":`: a module run as a script is an entry point."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def pulls(tree: ast.AST, forbidden: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every call of a forbidden name outside `__main__` blocks."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if _main_block(node):
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in forbidden:
                found.append((node.lineno, name))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def library_pulls() -> list[str]:
    forbidden = {"get_settings", *settings_classes()}
    hits = []
    for root in LIBS:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative in ALLOWED:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            hits += [
                f"{path.relative_to(REPO)}:{line} {name}()" for line, name in pulls(tree, forbidden)
            ]
    return hits


def test_no_library_pulls_its_settings() -> None:
    assert library_pulls() == [], "pass the settings section in from the entry point"


def test_the_walk_finds_a_pull() -> None:
    forbidden = {"get_settings", *settings_classes()}
    assert {"Settings", "ReviewerServiceSettings", "ClientSettings"} <= forbidden
    source = (
        "def f():\n    return get_settings().corpus\n"
        "def g():\n    return research_platform.settings.Settings()\n"
        'if __name__ == "__main__":\n    Settings()\n'
    )
    assert pulls(ast.parse(source), forbidden) == [(2, "get_settings"), (4, "Settings")]


def test_the_machine_conventions_reach_the_sections_that_use_them() -> None:
    from research_platform.settings import CorpusSettings, Settings

    settings = Settings(omp_num_threads="2", xdg_cache_home="/cache")
    assert settings.corpus.embed_threads == 2
    assert settings.corpus.onnx_cache_dir == "/cache/research-engine/onnx"
    assert (settings.judgement.threads, settings.judgement.onnx_cache_dir) == (
        2,
        "/cache/research-engine/onnx",
    )
    named = Settings(
        omp_num_threads="2", corpus=CorpusSettings(embed_threads=3, onnx_cache_dir="/mine")
    )
    assert (named.corpus.embed_threads, named.corpus.onnx_cache_dir) == (3, "/mine")
    assert Settings(omp_num_threads="0").corpus.embed_threads is None
    assert Settings(judgement_backend="onnx").judgement.backend == "onnx"


def test_the_process_models_take_the_section_the_entry_point_hands_in() -> None:
    from research_corpus.embedding import configure_embedder, get_embedder
    from research_judgement import WeightsUnavailable, configure_judgement, get_judge
    from research_platform.settings import CorpusSettings, JudgementSettings

    try:
        configure_embedder(CorpusSettings(embed_batch_size=7, embed_threads=1))
        embedder = get_embedder()  # the model loads on first use, not here
        assert (embedder.batch_size, embedder.threads) == (7, 1)
        configure_embedder(CorpusSettings(embed_batch_size=9))
        assert get_embedder() is not embedder and get_embedder().batch_size == 9
        configure_judgement(JudgementSettings(weights="/nowhere/judgement"))
        with pytest.raises(WeightsUnavailable, match="/nowhere/judgement"):
            get_judge()
    finally:
        configure_embedder(CorpusSettings())
        configure_judgement(JudgementSettings())
