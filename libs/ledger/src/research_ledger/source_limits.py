"""Admin limits of source lists (seed 002 §4.1), per workspace, and how a request is held to them.

Limits are set only through the admin routes and applied *silently*: a run-time value beyond a
limit is clamped (`clamp`), and the clamped value is what the stored list and the API show.
Schedules are the exception the issue names: an `update_frequency` shorter than the minimum
interval, or one list too many, is refused (`schedule_refusal` says which limit).

The gateway (to answer the request) and the scout (for a command straight from the bus) both
call `clamp`, so the rule lives once, here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, field_validator
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts.sourcelists import (
    HARD_MAX_REFERENCES,
    DetailLevel,
    RequestSourceList,
    SourceType,
    duration_seconds,
)
from research_ledger.tables import SourceListLimitsRow

DEFAULT_WORKSPACE = "default"
# Every API a source list can be routed to (the connector's source names).
ACADEMIC_APIS = (
    "semantic_scholar",
    "crossref",
    "openalex",
    "pubmed",
    "europepmc",
    "arxiv",
    "corpus",
)
WEB_APIS = ("tavily",)
ALL_APIS = ACADEMIC_APIS + WEB_APIS
ApiName = Literal[ALL_APIS]  # type: ignore[valid-type]  # mypy reads no Literal of a tuple; the schema lists them: no "unknown API" 422
MAX_INT = 2**31 - 1  # the columns are Postgres integers


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# A JSON Schema `integer`: 321 and 321.0 (the same number in JSON), never `true` or "321".
JsonInt = Annotated[StrictInt, BeforeValidator(_integral)]


class WorkspaceLimits(BaseModel):
    """What an admin may set; the defaults are the seed's."""

    model_config = ConfigDict(extra="forbid")

    max_references: JsonInt = Field(default=50, ge=1, le=HARD_MAX_REFERENCES)
    allowed_source_types: list[SourceType] = Field(
        default_factory=lambda: list(SourceType), min_length=1
    )
    allowed_apis: list[ApiName] = Field(default_factory=lambda: list(ALL_APIS), min_length=1)
    max_scheduled_lists: JsonInt = Field(default=10, ge=0, le=10_000)
    min_update_interval_s: JsonInt = Field(
        default=24 * 3600, ge=60, le=MAX_INT, description="Shortest re-run period (default 24 h)."
    )
    detail_level_ceiling: DetailLevel = DetailLevel.facts_list
    default_language: str = Field(
        default="en", max_length=35, pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
    )

    @field_validator("allowed_apis")
    @classmethod
    def _unique_apis(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    @field_validator("allowed_source_types")
    @classmethod
    def _unique_types(cls, value: list[SourceType]) -> list[SourceType]:
        return list(dict.fromkeys(value))


def clamp(request: RequestSourceList, limits: WorkspaceLimits) -> RequestSourceList:
    """`request` held to `limits`: references capped, a source type the workspace does not allow
    replaced by the first one it does, the detail level lowered to the ceiling, the workspace
    language filled in. Idempotent (clamping twice changes nothing)."""
    allowed = [t for t in SourceType if t in limits.allowed_source_types]
    source_type = request.source_type if request.source_type in allowed else allowed[0]
    detail = request.detail_level
    if detail.rank > limits.detail_level_ceiling.rank:
        detail = limits.detail_level_ceiling
    return request.model_copy(
        update={
            "num_references": min(request.num_references, limits.max_references),
            "source_type": source_type,
            "detail_level": detail,
            "language": request.language or limits.default_language,
        }
    )


def schedule_refusal(
    update_frequency: str | None, scheduled_lists: int, limits: WorkspaceLimits
) -> str | None:
    """Why a schedule may not be set (naming the limit), or None. `scheduled_lists` counts the
    workspace's other active or paused schedules."""
    if update_frequency is None:
        return None
    seconds = duration_seconds(update_frequency)
    if seconds < limits.min_update_interval_s:
        return (
            f"update_frequency {update_frequency} is shorter than the workspace's minimum update interval "
            f"(min_update_interval_s={limits.min_update_interval_s})"
        )
    if scheduled_lists >= limits.max_scheduled_lists:
        return (
            f"the workspace already has {scheduled_lists} scheduled source lists "
            f"(max_scheduled_lists={limits.max_scheduled_lists})"
        )
    return None


class LimitsBook:
    """Workspace limits in the caller's session. A workspace without a row has the `default`
    workspace's limits (an admin's cap on `default` holds for every workspace nobody declared);
    without a `default` row either, the seed's defaults."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def declared(self, workspace: str) -> bool:
        """Whether `workspace` has a limits row of its own."""
        return await self.session.get(SourceListLimitsRow, workspace) is not None

    async def of(self, workspace: str) -> WorkspaceLimits:
        row = await self.session.get(SourceListLimitsRow, workspace)
        if row is None and workspace != DEFAULT_WORKSPACE:
            row = await self.session.get(SourceListLimitsRow, DEFAULT_WORKSPACE)
        if row is None:
            return WorkspaceLimits()
        # the row's columns are the model's fields (`store` writes them from its dump)
        return WorkspaceLimits.model_validate(row, from_attributes=True)

    async def workspaces(self) -> list[str]:
        return list(
            await self.session.scalars(
                select(SourceListLimitsRow.workspace).order_by(SourceListLimitsRow.workspace)
            )
        )

    async def store(self, workspace: str, limits: WorkspaceLimits) -> dict[str, Any]:
        """Write `limits` for `workspace`; returns the previous values (for the audit row)."""
        previous = (await self.of(workspace)).model_dump(mode="json")
        values = limits.model_dump(mode="json")
        statement = insert(SourceListLimitsRow).values(workspace=workspace, **values)
        await self.session.execute(
            statement.on_conflict_do_update(
                index_elements=[SourceListLimitsRow.workspace],
                set_={**values, "updated_at": func.now()},
            )
        )
        return previous
