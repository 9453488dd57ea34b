"""The installation secret: one random key per installation, keying what must not be reversible.

Audit rows keep a digest of a person's text (an `Idempotency-Key`, a question, a key's label) and
a task id may derive from a client's `Idempotency-Key`; both are readable by every reader, so
both are an HMAC under this secret, never a plain hash a short identifier could be enumerated
from (`MRN-00123456` is one of 10^8 candidates).

Where it lives: the `INSTALLATION_SECRET` setting, else the file `INSTALLATION_SECRET_FILE`
(default `<data_dir>/installation.key`), created with mode 0600 at first start like the local
admin key (`research-engine up`; two processes starting at once agree: the file is created
exclusively and the loser reads the winner's). It is kept out of the database, so a copy of the
database alone reverses nothing; every process of the installation must read the same secret.
Rotation is documented in docs/security.md (a new secret starts new digests and new
idempotency-derived task ids; the old ones stay as they are).

A process installs its secret once at start (`install`, called by `research_platform.service`,
the gateway and the CLI); the audit writer and the task-id derivation read it with `current`.
A process that installed none keys with a random secret of its own: its digests are still
irreversible, though no other process can reproduce them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from research_platform.settings import Settings

SECRET_FILE = "installation.key"  # noqa: S105 - the file's name, not a secret
_installed: bytes | None = None
_fallback = secrets.token_bytes(32)


def secret_path(settings: Settings) -> Path:
    return settings.installation_secret_file or settings.data_dir / SECRET_FILE


def _create_or_read(path: Path) -> str:
    """The secret in `path`, written first (0600, exclusively) when there is none."""
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(partial, path)  # fails when another process created it first: theirs wins
        except FileExistsError:
            pass
        finally:
            partial.unlink()
    return path.read_text().strip()


def installation_secret(settings: Settings) -> bytes:
    """The installation's secret: the setting, else the file (created when missing)."""
    if settings.installation_secret is not None:
        configured = settings.installation_secret.get_secret_value().strip()
        if len(configured) < 16:
            raise ValueError("INSTALLATION_SECRET must be at least 16 characters")
        return configured.encode()
    stored = _create_or_read(secret_path(settings))
    if len(stored) < 16:
        raise ValueError(f"{secret_path(settings)} holds no secret (at least 16 characters)")
    return stored.encode()


def install(secret: bytes) -> None:
    """Make `secret` this process's key for audit digests and derived task ids."""
    global _installed  # noqa: PLW0603 - the process's one installed secret, set at start-up
    _installed = secret


def current() -> bytes:
    """This process's installed secret (a random one of its own when none was installed)."""
    return _installed if _installed is not None else _fallback


def keyed(text: str, secret: bytes | None = None) -> bytes:
    """HMAC-SHA256 of `text` under `secret` (default: this process's)."""
    return hmac.new(secret or current(), text.encode("utf-8", "replace"), hashlib.sha256).digest()
