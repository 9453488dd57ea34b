"""Invented patients sent through every route of a running stack, and the scans that look for them.

Used by `tests/privacy/test_every_route.py` and `bench/privacy_probe.py`. Three patients (US, UK
and Danish forms of names, dates, phones, addresses and postcodes; nothing here is real) go in
through a task with `patient_ref`, a review, a verification with `watch` and a source list with
keywords and `save_to`. Every outside source and the OpenAI-compatible provider point at a local
server that records what it receives (`recording_server`, `stack_env`); then `leaks` is asked of
every recorded request, every row of every table and every message every stream keeps.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import unquote_plus

import httpx
import nats
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_connector.registry import SHARED_SETTINGS, SOURCE_TYPES
from research_contracts import subjects

API = "/api/research/v1"


@dataclass(frozen=True)
class Patient:
    name: str
    parts: tuple[str, ...]
    dob: str
    mrn: str
    phone: str
    email: str
    street: str
    postcode: str

    def values(self) -> list[str]:
        return [
            self.name,
            *self.parts,
            self.dob,
            self.mrn,
            self.phone,
            self.email,
            self.street,
            self.postcode,
        ]

    def card(self) -> str:
        return (
            f"{self.name}, DOB {self.dob}, MRN {self.mrn}, phone {self.phone}, {self.email}, "
            f"{self.street}, {self.postcode}"
        )


PATIENTS = (
    Patient(
        "Margarethe Kowalczyk",
        ("Margarethe", "Kowalczyk"),
        "07/23/1961",
        "48213377",
        "555-318-2290",
        "m.kowalczyk@example.org",
        "48 Birchwood Lane",
        "Dayton OH 45402",
    ),
    Patient(
        "Oluwaseun Adeyemi-Hart",
        ("Oluwaseun", "Adeyemi-Hart"),
        "1958-11-02",
        "A7731902",
        "+44 20 7946 0321",
        "seun.hart@mail.example",
        "221B Baker Street",
        "London NW1 6XE",
    ),
    Patient(
        "Søren Haugaard",
        ("Søren", "Haugaard"),
        "3 March 1949",
        "HN-4471-203",
        "0171 882 4412",
        "soren.h@example.dk",
        "Nørregade 14",
        "1165 København",
    ),
)
ROUTES = ("tasks", "reviews", "verifications", "source-lists")


def leaks(text_: str) -> list[str]:
    """The patients' values (full name, name parts, DOB, MRN, phone, e-mail, street, postcode) in `text_`."""
    folded = text_.casefold()
    return sorted(
        {value for patient in PATIENTS for value in patient.values() if value.casefold() in folded}
    )


class Recorder(BaseHTTPRequestHandler):
    """Records every request line and body; answers an empty JSON object (sources degrade, models fall back)."""

    received: ClassVar[list[str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        Recorder.received.append(unquote_plus(self.path) + "\n" + body)
        data = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        return


@contextmanager
def recording_server() -> Iterator[str]:
    """A local server recording every request (`Recorder.received`); yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


def stack_env(recorder_url: str) -> dict[str, str]:
    """Environment of a stack whose every outside source and remote model is the recording server."""
    env = {
        "LLM__PROVIDER": "openai",
        "LLM__OPENAI_BASE_URL": f"{recorder_url}/v1",
        "LLM__OPENAI_API_KEY": "sk-test",
        "LLM__TIMEOUT_S": "5",
        "CONNECTOR__CACHE_ENABLED": "false",
    }
    for name in sorted({SHARED_SETTINGS.get(source, source) for source in SOURCE_TYPES}):
        env[f"CONNECTOR__{name.upper()}__BASE_URL"] = f"{recorder_url}/{name}"
        env[f"CONNECTOR__{name.upper()}__MAX_RETRIES"] = "0"
    return env


def submit_every_route(client: httpx.Client) -> dict[str, httpx.Response]:
    """The patients through a task (with `patient_ref`), a review, a watched verification and a source list."""
    alice, bob, carl = PATIENTS
    return {
        "tasks": client.post(
            f"{API}/tasks",
            json={
                "question": f"Does metformin reduce lactic acidosis in CKD for {bob.name} (MRN {bob.mrn})?",
                "patient_ref": bob.card(),
                "filters": {"sources": ["corpus", "pubmed", "europepmc"]},
            },
        ),
        "reviews": client.post(
            f"{API}/reviews",
            json={
                "topic": f"exercise training and quality of life in chronic heart failure for patient {alice.card()}",
                "sources": ["pubmed", "openalex"],
                "max_iterations": 1,
            },
        ),
        "verifications": client.post(
            f"{API}/verifications",
            json={
                "claim": f"Exercise training improves quality of life in chronic heart failure, as in {carl.card()}",
                "watch": True,
                "sources": ["corpus", "pubmed"],
            },
        ),
        "source-lists": client.post(
            f"{API}/source-lists",
            json={
                "prompt": f"Does exercise training improve quality of life in heart failure? Patient {alice.card()}",
                "keywords": ["exercise training", alice.name, bob.mrn],
                "num_references": 3,
                "save_to": {"kind": "patient", "id": carl.mrn},
            },
        ),
    }


def _wait(
    client: httpx.Client, path: str, done: set[str], timeout_s: float, pick: str | None = None
) -> dict:
    deadline = time.monotonic() + timeout_s
    view: dict = {}
    while time.monotonic() < deadline:
        answer = client.get(path).json()
        view = next((v for v in answer if v.get("source_list_id") == pick), {}) if pick else answer
        if view.get("status") in done:
            return view
        time.sleep(1.0)
    raise AssertionError(f"{path} did not finish in {timeout_s:.0f} s: {view}")


def wait_every_route(
    client: httpx.Client, accepted: dict[str, httpx.Response], timeout_s: float = 600
) -> dict[str, dict]:
    """Each route's final view (a task `claimed` or `failed`, a report `completed` or `failed`)."""
    ids = {route: answer.json() for route, answer in accepted.items()}
    return {
        "tasks": _wait(
            client, f"{API}/tasks/{ids['tasks']['task_id']}", {"claimed", "failed"}, timeout_s
        ),
        "reviews": _wait(
            client,
            f"{API}/reviews/{ids['reviews']['review_id']}",
            {"completed", "failed"},
            timeout_s,
        ),
        "verifications": _wait(
            client,
            f"{API}/verifications/{ids['verifications']['verification_id']}",
            {"completed", "failed"},
            timeout_s,
        ),
        "source-lists": _wait(
            client,
            f"{API}/source-lists?limit=500",
            {"completed", "failed"},
            timeout_s,
            pick=ids["source-lists"]["source_list_id"],
        ),
    }


async def stored_leaks(
    sessions: async_sessionmaker[AsyncSession],
) -> tuple[int, dict[str, list[list[str]]]]:
    """(tables scanned, table → the values found in its rows) over every table of the schema."""
    found: dict[str, list[list[str]]] = {}
    patterns = [f"%{v}%" for p in PATIENTS for v in p.values()]
    async with sessions() as session:
        tables = (
            (
                await session.execute(
                    text(
                        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                        "AND table_type = 'BASE TABLE' ORDER BY table_name"
                    )
                )
            )
            .scalars()
            .all()
        )
        for table in tables:
            hits = (
                (
                    await session.execute(
                        text(
                            f'SELECT t::text FROM "{table}" t WHERE t::text ILIKE ANY(CAST(:patterns AS text[])) LIMIT 3'  # noqa: S608 - names from the catalogue
                        ),
                        {"patterns": patterns},
                    )
                )
                .scalars()
                .all()
            )
            if hits:
                found[table] = [leaks(h) for h in hits]
    return len(tables), found


async def bus_leaks(nats_url: str) -> tuple[int, dict[str, list[list[str]]]]:
    """(messages read, stream → the values found) over every message every stream keeps, but the dead letters
    (parked bodies are kept by design: docs/privacy.md)."""
    nc = await nats.connect(nats_url)
    read = 0
    found: dict[str, list[list[str]]] = {}
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            name = info.config.name
            if name is None or name == subjects.DEAD_LETTER_STREAM:
                continue
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                try:
                    msg = await js.get_msg(name, seq)
                except Exception:  # noqa: BLE001, S112 - deleted (a settled command) or expired
                    continue
                read += 1
                kept = (msg.data or b"").decode("utf-8", "replace") + json.dumps(
                    dict(msg.headers or {})
                )
                if leaks(kept):
                    found.setdefault(name, []).append(leaks(kept))
    finally:
        await nc.close()
    return read, found


def request_leaks() -> list[tuple[str, list[str]]]:
    """(request line, values found) for every recorded request that carried one."""
    return [(r.split("\n", 1)[0][:120], leaks(r)) for r in Recorder.received if leaks(r)]
