"""OpenAI Chat Completions over httpx, with a JSON-schema `response_format`.

Any OpenAI-compatible server works (Ollama, vLLM, llama.cpp): `LLM__OPENAI_BASE_URL` and
`LLM__OPENAI_MODEL` point at it; the key may be empty for local servers. No client-side
retries: a timeout, 429 or 5xx goes straight to the next provider of the chain.
"""

from __future__ import annotations

from typing import Any

import httpx

from research_llm import metrics
from research_llm.errors import ProviderError, ProviderUnavailable
from research_llm.providers.remote import Message, RemoteProvider, describe


class OpenAIProvider(RemoteProvider):
    name = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = "https://api.openai.com/v1",
        model: str = "gpt-4o",
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(model=model)
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._timeout = timeout_s
        self._transport = transport

    async def _complete(self, messages: list[Message], schema_name: str, schema: dict[str, Any]) -> str:
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            async with httpx.AsyncClient(timeout=self._timeout, transport=self._transport) as client:
                response = await client.post(self._url, json=payload, headers=headers)
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable(f"timeout after {self._timeout:g}s ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(f"transport error: {describe(exc)}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise ProviderUnavailable(f"HTTP {response.status_code}", status=response.status_code)
        if response.status_code >= 400:
            raise ProviderError(f"HTTP {response.status_code}: {_error_message(response)}", status=response.status_code)
        try:
            body = response.json()
            message = body["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"malformed chat completion: {describe(exc)}") from exc
        usage = body.get("usage") or {}
        metrics.tokens(self.name, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        if message.get("refusal"):
            raise ProviderError(f"refused: {str(message['refusal'])[:200]}")
        return message.get("content") or ""


def _error_message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("message", ""))[:200]
    except (ValueError, AttributeError):
        return response.text[:200]
