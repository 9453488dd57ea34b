"""Every outside source and the OpenAI-compatible provider point at a local capture server;
synthetic patients go through the connector's search and the LLM provider, and no captured
request carries any of their identifiers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import unquote_plus

import httpx
import pytest

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.ratelimit import RateLimits
from research_connector.registry import SHARED_SETTINGS, SOURCE_TYPES, build_sources
from research_connector.settings import ConnectorSettings
from research_llm import EvidenceDoc
from research_llm.providers.openai import OpenAIProvider
from research_privacy.probes import CLASSES, leaked_tokens, probe_set
from research_researcher import prepare

pytestmark = pytest.mark.integration

PROBES = probe_set(seed=16, size=int(__import__("os").environ.get("PROBE_SIZE", "240")))
EVIDENCE = [
    EvidenceDoc(
        source_id="pmid:1",
        title="Denosumab trial",
        text="Denosumab reduced vertebral fractures by 68% in postmenopausal women.",
    )
]
CLAIM = {
    "statement": "Denosumab reduces vertebral fractures.",
    "entity": "denosumab",
    "confidence": 0.7,
    "supports": [
        {"source_id": "pmid:1", "quote": "Denosumab reduced vertebral fractures", "locator": None}
    ],
}


class Capture(BaseHTTPRequestHandler):
    """Records every request line and body; answers like an OpenAI server, or with an empty JSON."""

    captured: ClassVar[list[str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        Capture.captured.append(unquote_plus(self.path) + "\n" + body)
        if self.path.endswith("/chat/completions"):
            payload = {
                "choices": [{"message": {"role": "assistant", "content": json.dumps(CLAIM)}}]
            }
        else:
            payload = {}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:  # keep the test output quiet
        return


@pytest.fixture(scope="module")
def capture_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def outbound_part(request: str) -> str:
    """What varies with the input: the request line, and every non-system chat message.

    The system prompt and the JSON schema are constant text of ours, identical for every probe.
    """
    line, _, body = request.partition("\n")
    if not line.endswith("/chat/completions"):
        return request
    messages = json.loads(body)["messages"]
    return line + "\n" + "\n".join(m["content"] for m in messages if m["role"] != "system")


def leaks(probe_requests: list[tuple[int, list[str]]]) -> list[tuple[str, str, str]]:
    """(locale, class, token) for every identifier token found in the requests its probe caused."""
    found = []
    for index, requests in probe_requests:
        probe = PROBES[index]
        for cls in CLASSES:
            for request in requests:
                found += [
                    (probe.locale, cls, t)
                    for t in leaked_tokens(probe.values[cls], outbound_part(request))
                ]
    return found


async def test_no_identifier_reaches_a_source_or_the_remote_model(capture_url: str) -> None:
    settings = ConnectorSettings(_env_file=None, cache_enabled=False)
    for name in sorted(
        {SHARED_SETTINGS.get(source, source) for source in SOURCE_TYPES}
    ):  # settings groups
        group = getattr(settings, name)
        local = {
            "base_url": f"{capture_url}/{name}",
            "enabled": True,
            "rate_per_s": 1e6,
            "burst": 1000,
        }
        setattr(
            settings, name, group.model_copy(update=local)
        )  # the capture server has no rate limit
    Capture.captured.clear()
    sent: list[str] = []
    per_probe: list[tuple[int, list[str]]] = []
    async with httpx.AsyncClient() as client:
        sources = build_sources(
            settings, client=client, incidents=Incidents(None), limits=RateLimits()
        )
        provider = OpenAIProvider(
            api_key="sk-test", base_url=f"{capture_url}/v1", model="gpt-test", timeout_s=10.0
        )
        refused = 0
        for index, probe in enumerate(PROBES):
            before = len(Capture.captured)
            guarded = prepare.guard_question(probe.question, probe.patient_ref)
            sent.append(guarded.topic_query)
            found = await search_all(
                list(sources),
                guarded.topic_query,
                None,
                5,
                10.0,
                registry=sources,
                incidents=Incidents(None),
            )
            assert (
                "phi_refused" not in found.degraded.values()
            )  # the built query is clean, so it is sent
            raw = await search_all(
                list(sources),
                probe.question,
                None,
                5,
                10.0,
                registry=sources,
                incidents=Incidents(None),
            )
            refused += bool(raw.error)  # a caller that forgot the builder is refused, not served
            await provider.draft_claim(guarded.model_question, "denosumab", EVIDENCE)
            per_probe.append((index, Capture.captured[before:]))
    searches = [c for c in Capture.captured if "/chat/completions" not in c]
    prompts = [c for c in Capture.captured if "/chat/completions" in c]
    assert len(prompts) == len(PROBES) and len(searches) >= len(PROBES) * 5
    assert refused == len(PROBES)
    assert leaks(per_probe) == []
    # ...while each probe's scientific topic did go out
    assert all(any(query in c for c in searches) for query in sent)
