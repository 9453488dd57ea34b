"""What the periodic agents (correlator, replicator, librarian) share.

scheduler = Scheduler(agent, engine, work, settings.schedule)   # work(ctx) -> counts
mount_controls(broker, agent, lambda: scheduler)                 # research.control.<agent>.<verb>
async with transaction(sessions) as session:
    await FindingsRepository(session, agent).record(kind, claim_ids, payload)
"""

from research_agents.controls import mount_controls
from research_agents.errors import AgentError, AgentPaused, RunCancelled, RunInFlight
from research_agents.findings import (
    FINDING_TTL,
    FindingsRepository,
    FindingView,
    NewFinding,
    purge_expired,
    settle,
)
from research_agents.runlock import RunLock
from research_agents.scheduler import RunContext, Scheduler, ScheduleSettings

__all__ = [
    "FINDING_TTL",
    "AgentError",
    "AgentPaused",
    "FindingView",
    "FindingsRepository",
    "NewFinding",
    "RunCancelled",
    "RunContext",
    "RunInFlight",
    "RunLock",
    "ScheduleSettings",
    "Scheduler",
    "mount_controls",
    "purge_expired",
    "settle",
]
