"""The shared pieces of `research_platform.settings`: a bound lives in the field's type (a group
that changes the default keeps it), a field's docstring is its documented meaning, and a group the
services share is read under each service's own prefix."""

from __future__ import annotations

import pytest
from pydantic import Field, PositiveFloat, ValidationError

from research_platform.settings import CorpusAgentSettings, Settings, SettingsGroup, Share

pytestmark = pytest.mark.unit


class Checks(SettingsGroup):
    floor: Share = 0.5
    """Weakest score that counts."""
    wait_s: PositiveFloat = 1.0
    """Longest wait."""


class SlowChecks(Checks):
    wait_s: PositiveFloat = 30.0


class Agent(CorpusAgentSettings):
    """A service's own group on top of the shared fields."""


class Root(Settings):
    checks: SlowChecks = Field(default_factory=SlowChecks)
    agent: Agent = Field(default_factory=Agent)


def test_a_field_docstring_is_its_description() -> None:
    assert Checks.model_fields["floor"].description == "Weakest score that counts."
    assert Settings.model_fields["log_level"].description == "Least severe log level written."


@pytest.mark.parametrize(
    ("variable", "value"),
    [("CHECKS__FLOOR", "1.5"), ("CHECKS__FLOOR", "-0.1"), ("CHECKS__WAIT_S", "0")],
)
def test_a_value_outside_its_type_is_refused(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError, match=variable.split("__")[1].lower()):
        Root(_env_file=None)


def test_a_group_that_changes_a_default_keeps_the_bound() -> None:
    assert SlowChecks().wait_s == 30.0
    with pytest.raises(ValidationError):
        SlowChecks(wait_s=0)


def test_the_shared_agent_fields_are_read_under_the_service_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT__CONCURRENCY", "7")
    monkeypatch.setenv("AGENT__TOOL_TIMEOUT_S", "3.5")
    monkeypatch.setenv("AGENT__LLM_TIMEOUT_S", "9")
    agent = Root(_env_file=None).agent
    assert (agent.concurrency, agent.tool_timeout_s, agent.llm_timeout_s) == (7, 3.5, 9.0)
    assert (Agent().concurrency, Agent().tool_timeout_s, Agent().llm_timeout_s) == (2, 20.0, 60.0)


def test_a_missing_server_address_names_its_variable() -> None:
    with pytest.raises(RuntimeError, match="NATS_URL is not set"):
        Settings(_env_file=None, nats_url=None).require_nats_url()
    with pytest.raises(RuntimeError, match="DATABASE_URL is not set"):
        Settings(_env_file=None, database_url=None).require_database_url()
