"""docs/configuration.md is what the settings models generate now (`task docs:config` rewrites it),
every variable it names is one the models really read, and runtime code reads no variable past
them (`os.environ` only where a process sets variables for a child or a library)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsError

from research_engine import config_docs

pytestmark = pytest.mark.unit

REPO = config_docs.REPO


def test_the_page_is_what_the_models_generate() -> None:
    assert config_docs.PAGE.read_text(encoding="utf-8") == config_docs.render(), (
        "docs/configuration.md is stale: run `.venv/bin/task docs:config`"
    )
    assert config_docs.main(["--check"]) == 0


def test_the_page_names_the_settings_that_used_to_be_missing() -> None:
    page = config_docs.PAGE.read_text(encoding="utf-8")
    for variable in (
        "JUDGEMENT_WEIGHTS",
        "JUDGEMENT_BACKEND",
        "REVIEWER__PAPERS_READ",
        "VERIFIER__WATCH_DAYS",
        "SCOUT__ENGINE",
        "METRICS_LAG_INTERVAL_S",
        "RESEARCH_API_KEY",
    ):
        assert f"| `{variable}` |" in page


def test_a_field_without_a_description_is_refused() -> None:
    class Group(BaseModel):
        """A group."""

        described: int = Field(default=1, description="Has a meaning.")
        silent: int = 2

    class Root(BaseSettings):
        group: Group = Field(default_factory=Group)

    root = config_docs.Root("t", "t", Root)
    with pytest.raises(config_docs.Undescribed, match="GROUP__SILENT"):
        config_docs.root_groups(root)


def test_a_subclass_that_only_changes_a_default_keeps_the_base_meaning() -> None:
    class Base(BaseModel):
        url: str = Field(default="", description="Where it lives.")

    class Child(Base):
        url: str = "https://example.org"

    [group] = config_docs.groups(Child, Child(), "X__", "")
    assert group.rows == (
        config_docs.Row("X__URL", "str", "`https://example.org`", "Where it lives."),
    )


def _value_at(model: BaseModel, path: list[str]) -> object:
    for name in path:
        model = getattr(model, name)
    return model


@pytest.mark.parametrize("root", config_docs.roots(), ids=lambda root: root.title)
def test_every_documented_variable_is_read_by_its_model(
    root: config_docs.Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set each variable to a marker: the model either holds the marker at the field's path or
    refuses the value for that field. Either way the variable reaches that field."""
    rows = [row for group in config_docs.root_groups(root) for row in group.rows]
    assert rows
    for row in rows:
        path = row.variable.lower().split("__")
        marker = '["zz-marker"]' if row.type.startswith(("list", "mapping")) else "zz-marker"
        with monkeypatch.context() as env:
            env.setenv(row.variable, marker)
            try:
                value = _value_at(root.model(_env_file=None), path)
            except ValidationError as refused:
                locations = [list(map(str, error["loc"])) for error in refused.errors()]
                assert any(loc[: len(path)] == path for loc in locations), (row, locations)
                continue
            except SettingsError as refused:  # a mapping given a list: refused while parsing
                assert row.type.startswith("mapping"), (row, refused)  # noqa: PT017 - one of two outcomes
                continue
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if isinstance(value, Path):
            value = str(value)
        assert value in ("zz-marker", ["zz-marker"]), (row, value)


# Where runtime code may touch the process environment: it sets variables for a child process
# or for a library, and reads none (a setting is a field of a settings model).
ALLOWED = {
    "libs/platform/src/research_platform/offline.py": 2,  # HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE
    "libs/platform/src/research_platform/embedded.py": 1,  # a child service's environment
}
RAW = re.compile(r"\bos\.environ\b|\bos\.getenv\b|\bgetenv\(|from os import environ")


def test_runtime_code_reads_the_environment_through_settings_only() -> None:
    found: dict[str, int] = {}
    folders = [*REPO.glob("libs/*/src"), *REPO.glob("services/*/src"), REPO / "src"]
    for folder in folders:
        for path in folder.rglob("*.py"):
            hits = len(RAW.findall(path.read_text(encoding="utf-8")))
            if hits:
                found[str(path.relative_to(REPO))] = hits
    assert found == ALLOWED


def test_the_docs_task_exists() -> None:
    taskfile = (REPO / "Taskfile.yml").read_text(encoding="utf-8")
    assert "research_engine.config_docs" in taskfile
    assert Path(config_docs.__file__).name == "config_docs.py"
