"""verifier: each verdict remembers the judge that gave it

Revision ID: 0017
Revises: 0016

`verification_verdicts.judge` holds the judge's version (the abstract model's weight digest and
its rule set's, `research_judgement.abstract.AbstractJudge.version`, or the engine's name), so
that a re-verification whose verdict moved because a new judge decided it is told apart from one
whose evidence changed. Rows written before have none.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("verification_verdicts", sa.Column("judge", sa.String(80), nullable=True))


def downgrade() -> None:
    op.drop_column("verification_verdicts", "judge")
