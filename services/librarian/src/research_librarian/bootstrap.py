"""The librarian's composition root. It asks no LLM and loads no model: it is built from its
settings and from the ledger it walks, whose reads go over one autocommit connection (the walk
reads each batch in its own snapshot, with no BEGIN and ROLLBACK around each statement) while
its writes go through the service's sessions.

    deps = bootstrap(settings)            # in `create_app`
    Librarian(deps.ledger(ctx), deps.librarian)   # once the app's database is open
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from research_ledger import Ledger
from research_librarian.settings import LibrarianServiceSettings, LibrarianSettings
from research_platform.app import ServiceContext
from research_platform.db import session_factory, without_transactions


@dataclass(frozen=True)
class Deps:
    """What the librarian is built from."""

    settings: LibrarianServiceSettings

    @property
    def librarian(self) -> LibrarianSettings:
        return self.settings.librarian

    def ledger(self, ctx: ServiceContext[LibrarianServiceSettings, Any]) -> Ledger:
        """The ledger a run works on, once `ctx`'s database is open: writes through the service's
        sessions, reads (the walk) in autocommit on the same pool."""
        return Ledger(ctx.sessions, read_sessions=session_factory(without_transactions(ctx.engine)))


def bootstrap(settings: LibrarianServiceSettings) -> Deps:
    return Deps(settings)
