"""What the periodic agents (correlator, replicator, librarian) share.

scheduler = Scheduler(agent, engine, work, settings.schedule)   # work(ctx) -> counts
mount_controls(broker, agent, lambda: scheduler)                 # research.control.<agent>.<verb>
async with ledger.unit_of_work(service=agent) as uow:   # findings are the ledger's
    await uow.findings.record(kind, claim_ids, payload)  # (`research_ledger.findings`)
"""

from research_agents.controls import mount_controls
from research_agents.errors import AgentError, AgentPaused, RunCancelled, RunInFlight
from research_agents.runlock import RunLock
from research_agents.scheduler import RunContext, Scheduler, ScheduleSettings

__all__ = [
    "AgentError",
    "AgentPaused",
    "RunCancelled",
    "RunContext",
    "RunInFlight",
    "RunLock",
    "ScheduleSettings",
    "Scheduler",
    "mount_controls",
]
