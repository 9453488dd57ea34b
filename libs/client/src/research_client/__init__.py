"""research_client: the research-engine gateway API as a small typed Python client.

from research_client import ResearchClient
rc = ResearchClient()            # RESEARCH_URL / RESEARCH_API_KEY, the config file, or the local key
rc.submit_task("Does vitamin D prevent fractures?")
"""

from research_client.client import FORMAT_ALIASES, ResearchClient
from research_client.credentials import Credentials, resolve
from research_client.errors import ApiError
from research_client.models import (
    AuditEntry,
    Claim,
    ControlReply,
    Finding,
    ModeAccepted,
    RunEventItem,
    SearchResults,
    Task,
    TaskAccepted,
    Verdict,
)

__all__ = [
    "FORMAT_ALIASES",
    "ApiError",
    "AuditEntry",
    "Claim",
    "ControlReply",
    "Credentials",
    "Finding",
    "ModeAccepted",
    "ResearchClient",
    "RunEventItem",
    "SearchResults",
    "Task",
    "TaskAccepted",
    "Verdict",
    "resolve",
]
