"""`research-engine keys`: create prints the key once, list never shows it, revoke refuses it afterwards."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from bench.harness.servers import Servers
from research_engine.cli import app

pytestmark = pytest.mark.integration


def test_create_list_revoke(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", servers.database_url)
    runner = CliRunner()
    created = runner.invoke(app, ["keys", "create", "--role", "admin", "--name", "ops on call"])
    assert created.exit_code == 0, created.output
    key_id_line = re.search(r"key id\s+(\S+)", created.output)
    secret_line = re.search(r"key\s+(rek_\S+)", created.output)
    assert key_id_line is not None and secret_line is not None, created.output
    key_id, secret = key_id_line.group(1), secret_line.group(1)
    listed = runner.invoke(app, ["keys", "list"])
    assert listed.exit_code == 0 and key_id in listed.output and "ops on call" in listed.output
    assert secret not in listed.output, "list never shows a key"
    assert runner.invoke(app, ["keys", "create", "--role", "superuser"]).exit_code != 0
    assert runner.invoke(app, ["keys", "revoke", key_id]).exit_code == 0
    assert "revoked" in runner.invoke(app, ["keys", "list"]).output
    again = runner.invoke(app, ["keys", "revoke", key_id])
    assert again.exit_code == 1
