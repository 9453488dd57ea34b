"""Errors of the periodic-agent machinery.

AgentError (a ResearchEngineError)
├── RunInFlight     a run of this agent already holds the run-lock (any replica) → 409
├── AgentPaused     the operator paused the agent; no run may start → 409
└── RunCancelled    raised at a safe point inside a run the operator cancelled
"""

from __future__ import annotations

import uuid

from research_platform.errors import ResearchEngineError


class AgentError(ResearchEngineError):
    """Base of every error of the periodic agents."""


class RunInFlight(AgentError):
    """Another run of the agent is in flight, on this replica or another one."""

    def __init__(self, agent: str, run_id: uuid.UUID | None = None) -> None:
        super().__init__(f"a run of {agent} is already in flight")
        self.run_id = run_id


class AgentPaused(AgentError):
    """The agent is paused by an operator; resume it first."""


class RunCancelled(AgentError):
    """The run was cancelled by an operator and stopped at a safe point."""
