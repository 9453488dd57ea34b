"""`ResearchClient`: the gateway API as typed Python calls (sync, so a notebook cell just works).

    from research_client import ResearchClient
    with ResearchClient() as rc:                      # URL and key: see credentials.py
        accepted = rc.submit_task("Does vitamin D prevent fractures?", tier="priority")
        task = rc.wait_for_task(accepted.task_id)
        print(task.claim.statement, task.claim.verdict)
        for item in rc.run_events(run_id):            # a mode's live trace, resumed on reconnect
            print(item.event.type)

Every non-2xx answer raises `ApiError` carrying the status and the gateway's `detail`. The mode
routes (reviews, verifications, source lists) are thin: the request body is the mode's contract
(passed as keyword arguments) and the answer is `ModeAccepted` (its id and `run_id`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from research_client.credentials import Credentials, resolve
from research_client.errors import ApiError
from research_client.events import follow_run
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
)
from research_contracts.sourcelists import SourceList

API = "/api/research/v1"
ExportFormat = Literal["markdown", "pdf", "bibtex", "ris", "csl-json"]
# CLI spellings → the gateway's format names
FORMAT_ALIASES: dict[str, ExportFormat] = {
    "md": "markdown",
    "markdown": "markdown",
    "pdf": "pdf",
    "bib": "bibtex",
    "bibtex": "bibtex",
    "ris": "ris",
    "csljson": "csl-json",
    "csl-json": "csl-json",
    "json": "csl-json",
}
PERIODIC_AGENTS = ("correlator", "replicator", "librarian")

M = TypeVar("M", bound=BaseModel)


class ResearchClient:
    """A connection to one gateway with one API key (`X-API-Key`)."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        data_dir: Path | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.credentials: Credentials = resolve(url, api_key, data_dir=data_dir)
        headers = {"X-API-Key": self.credentials.api_key} if self.credentials.api_key else {}
        self._http = httpx.Client(
            base_url=self.credentials.url, headers=headers, timeout=timeout, transport=transport
        )

    @property
    def url(self) -> str:
        return self.credentials.url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing ---------------------------------------------------------------------------
    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One call; raises `ApiError` unless the status is 2xx. `path` is relative to the API root."""
        full = path if path.startswith(API) else f"{API}{path}"
        reply = self._http.request(method, full, **kwargs)
        if reply.is_success:
            return reply
        try:
            detail = reply.json().get("detail", reply.json())
        except ValueError:
            detail = reply.text[:500]
        raise ApiError(
            reply.status_code, detail, method=method, path=full, key_from=self.credentials.key_from
        )

    def _get(self, model: type[M], path: str, **params: Any) -> M:
        return model.model_validate(self.request("GET", path, params=_clean(params)).json())

    def _list(self, model: type[M], path: str, **params: Any) -> list[M]:
        return TypeAdapter(list[model]).validate_python(  # type: ignore[valid-type]  # a runtime type: a list of `model`
            self.request("GET", path, params=_clean(params)).json()
        )

    def health(self) -> bool:
        """Whether the gateway answers and reaches its database."""
        try:
            return self._http.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    # --- tasks and claims ---------------------------------------------------------------------
    def submit_task(
        self,
        question: str,
        *,
        entity: str | None = None,
        tier: str = "priority",
        filters: dict[str, Any] | None = None,
        task_id: uuid.UUID | None = None,
        idempotency_key: str | None = None,
    ) -> TaskAccepted:
        """Publish a research task (researcher role). The same `task_id` / key returns the same task."""
        body = _clean(
            {
                "question": question,
                "entity": entity,
                "tier": tier,
                "filters": filters,
                "task_id": str(task_id) if task_id else None,
            }
        )
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return TaskAccepted.model_validate(
            self.request("POST", "/tasks", json=body, headers=headers).json()
        )

    def task(self, task_id: uuid.UUID | str) -> Task:
        return self._get(Task, f"/tasks/{task_id}")

    def wait_for_task(
        self, task_id: uuid.UUID | str, *, timeout: float = 300.0, poll_s: float = 0.5
    ) -> Task:
        """The task once its claim is decided or it failed; `TimeoutError` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            task = self.task(task_id)
            if task.finished:
                return task
            if time.monotonic() > deadline:
                raise TimeoutError(f"task {task_id} is still {task.status} after {timeout:.0f}s")
            time.sleep(poll_s)

    def claim(self, claim_id: uuid.UUID | str) -> Claim:
        return self._get(Claim, f"/claims/{claim_id}")

    def claims(
        self, *, status: str | None = None, entity: str | None = None, limit: int = 50
    ) -> list[Claim]:
        """Ledger claims, newest first, by status and entity."""
        return self._list(Claim, "/claims", status=status, entity=entity, limit=limit)

    # --- ledger reads -------------------------------------------------------------------------
    def findings(
        self,
        *,
        agent: str | None = None,
        kind: str | None = None,
        unresolved: bool = False,
        limit: int = 100,
    ) -> list[Finding]:
        return self._list(
            Finding, "/findings", agent=agent, kind=kind, unresolved=unresolved or None, limit=limit
        )

    def audit(
        self,
        *,
        action: str | None = None,
        task_id: uuid.UUID | str | None = None,
        claim_id: uuid.UUID | str | None = None,
        limit: int = 200,
    ) -> list[AuditEntry]:
        return self._list(
            AuditEntry, "/audit", action=action, task_id=task_id, claim_id=claim_id, limit=limit
        )

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid") -> SearchResults:
        """The local corpus (hybrid, lexical or dense)."""
        return self._get(SearchResults, "/search", q=query, k=k, mode=mode)

    # --- modes and their reports --------------------------------------------------------------
    def request_review(self, topic: str, **fields: Any) -> ModeAccepted:
        """A literature review of `topic` (fields: the `ReviewRequest` contract)."""
        return self._mode("/reviews", {"topic": topic, **fields})

    def request_verification(self, statement: str, **fields: Any) -> ModeAccepted:
        """A verification of `statement` (fields: the verification request contract)."""
        return self._mode("/verifications", {"statement": statement, **fields})

    def request_source_list(self, prompt: str, **fields: Any) -> ModeAccepted:
        """A source list for `prompt` (fields: the `SourceListRequest` contract)."""
        return self._mode("/source-lists", {"prompt": prompt, **fields})

    def review(self, review_id: uuid.UUID | str) -> dict[str, Any]:
        """A review with its current version (status, report, citation check, peer review)."""
        found: dict[str, Any] = self.get(f"/reviews/{review_id}")
        return found

    def refresh_review(self, review_id: uuid.UUID | str) -> ModeAccepted:
        """Run a (stale) review again: a new version with its diff to the current one."""
        return ModeAccepted.model_validate(
            self.request("POST", f"/reviews/{review_id}/refresh").json()
        )

    def rerun_source_list(self, source_list_id: uuid.UUID | str) -> ModeAccepted:
        """Run a source list again with its stored request: a new snapshot and its diff."""
        return ModeAccepted.model_validate(
            self.request("POST", f"/source-lists/{source_list_id}/runs").json()
        )

    def verification(self, verification_id: uuid.UUID | str) -> dict[str, Any]:
        found: dict[str, Any] = self.get(f"/verifications/{verification_id}")
        return found

    def source_list(self, source_list_id: uuid.UUID | str) -> SourceList:
        """The latest snapshot of a source list (the `SourceList` contract)."""
        return self._get(SourceList, f"/source-lists/{source_list_id}")

    def source_lists(self, **filters: Any) -> list[dict[str, Any]]:
        """Source lists (filters: `save_to_kind`, `save_to_id`, …)."""
        found: list[dict[str, Any]] = self.get("/source-lists", **filters)
        return found

    def _mode(self, path: str, body: dict[str, Any]) -> ModeAccepted:
        return ModeAccepted.model_validate(self.request("POST", path, json=_clean(body)).json())

    def get(self, path: str, **params: Any) -> Any:
        """Any read route as plain JSON (a mode's own views: `rc.get(f"/reviews/{review_id}")`)."""
        return self.request("GET", path, params=_clean(params)).json()

    def report(self, report_id: uuid.UUID | str) -> dict[str, Any]:
        """The current version of a report (review, verification or source list)."""
        found: dict[str, Any] = self.get(f"/reports/{report_id}")
        return found

    def export(self, report_id: uuid.UUID | str, fmt: str = "markdown") -> bytes:
        """A report exported as Markdown, PDF, BibTeX, RIS or CSL-JSON (`md`, `bib`, `csljson` accepted)."""
        name = FORMAT_ALIASES.get(fmt.lower())
        if name is None:
            raise ValueError(
                f"unknown export format {fmt!r}: use one of {', '.join(sorted(FORMAT_ALIASES))}"
            )
        return self.request("GET", f"/reports/{report_id}/export", params={"format": name}).content

    def run_events(
        self,
        run_id: str,
        *,
        last_event_id: int | None = None,
        reconnect: bool = True,
        max_reconnects: int = 20,
    ) -> Iterator[RunEventItem]:
        """The events of a run as they happen, until its `done` event.

        A dropped connection is resumed after the last event received (`Last-Event-ID`), so no
        event is missed or repeated; `last_event_id` starts after an id you already have.
        """
        return follow_run(
            self,
            f"{API}/runs/{run_id}/events",
            last_event_id=last_event_id,
            reconnect=reconnect,
            max_reconnects=max_reconnects,
        )

    # --- operators ----------------------------------------------------------------------------
    def agent(self, agent: str, verb: str = "status", **body: Any) -> ControlReply:
        """An admin verb of a periodic agent: status, run-once, cancel-current, pause, resume (admin role)."""
        if agent not in PERIODIC_AGENTS:
            raise ValueError(f"unknown agent {agent!r}: use one of {', '.join(PERIODIC_AGENTS)}")
        method = "GET" if verb == "status" else "POST"
        reply = self._http.request(method, f"{API}/{agent}/{verb}", json=body or None)
        if reply.status_code in (401, 403, 422):
            self.request(
                method, f"/{agent}/{verb}", json=body or None
            )  # raises ApiError with the detail
        return ControlReply.model_validate(reply.json())  # 409 / 503 carry the agent's own reply

    def drain_quarantine(self, claim_ids: list[uuid.UUID] | None = None) -> ControlReply:
        body = {"claim_ids": [str(c) for c in claim_ids]} if claim_ids else None
        return ControlReply.model_validate(
            self.request("POST", "/critic/quarantine/drain", json=body).json()
        )

    @property
    def http(self) -> httpx.Client:
        """The underlying httpx client (base URL and key set) for routes without a method here."""
        return self._http


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (str(v) if isinstance(v, uuid.UUID) else v) for k, v in values.items() if v is not None
    }
