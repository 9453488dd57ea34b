"""OpenAI Chat Completions over httpx, with a JSON-schema `response_format`.

Any OpenAI-compatible server works (Ollama, vLLM, llama.cpp, LM Studio; docs/local-models.md):
`LLM__OPENAI_BASE_URL` and `LLM__OPENAI_MODEL` point at it; the key may be empty for local
servers. No client-side retries: a timeout, 429 or 5xx goes straight to the next provider of the
chain.

Every request carries `max_tokens` (`LLM__MAX_OUTPUT_TOKENS`, at most a third of the context), and
its prompt is trimmed to fit the context (`research_llm.context`): the context size is
`LLM__CONTEXT_TOKENS`, or what the server says (llama.cpp `GET /props`, vLLM's `max_model_len`
or llama.cpp's `meta.n_ctx` in `GET /v1/models`), asked once. A server that still refuses the prompt as too long (HTTP 400 with
llama.cpp's `exceed_context_size_error`, which names its `n_ctx`) gets it once more, trimmed
with a tighter estimate — never a 400 passed on for a prompt the provider could have shortened.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import httpx

from research_llm import context
from research_llm.errors import DoesNotFit, ProviderError, ProviderUnavailable
from research_llm.providers.remote import Message, RemoteProvider, describe

CONTEXT_MARGIN_TOKENS = 16
_UNKNOWN = object()


def is_openai_cloud(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").endswith("openai.com")


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
        max_output_tokens: int = 1024,
        context_tokens: int | None = None,
        chars_per_token: float = 3.0,
        concurrency: int = 4,
        prices: dict[str, tuple[float, float]] | None = None,
        schema_lengths: bool | None = None,
    ) -> None:
        super().__init__(
            model=model,
            timeout_s=timeout_s,
            concurrency=concurrency,
            prices=prices,
            schema_lengths=(not is_openai_cloud(base_url))
            if schema_lengths is None
            else schema_lengths,
        )
        self._api_key = api_key
        self._base = base_url.rstrip("/")
        self._url = self._base + "/chat/completions"
        self._transport = transport
        self.max_output_tokens = max_output_tokens
        self.chars_per_token = chars_per_token
        self._n_ctx: int | object | None = context_tokens if context_tokens else _UNKNOWN
        self._probe_lock = asyncio.Lock()
        self.trimmed_chars = 0  # characters of evidence cut to fit the context, since start

    def _client(self, timeout: float | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=timeout or self._timeout, transport=self._transport)

    async def context_tokens(self) -> int | None:
        """The server's context size (asked once), or None when it does not say."""
        if self._n_ctx is _UNKNOWN:
            async with self._probe_lock:
                if self._n_ctx is _UNKNOWN:
                    self._n_ctx = (
                        None if is_openai_cloud(self._base) else await self._probe_context()
                    )
        return self._n_ctx  # type: ignore[return-value]  # set above: never the _UNKNOWN sentinel here

    async def _probe_context(self) -> int | None:
        root = self._base.removesuffix("/v1")
        headers = self._headers()
        try:
            async with self._client(timeout=min(self._timeout, 5.0)) as client:
                response = await client.get(root + "/props", headers=headers)  # llama.cpp
                if response.status_code == 200:
                    body = response.json()
                    n_ctx = (body.get("default_generation_settings") or {}).get(
                        "n_ctx"
                    ) or body.get("n_ctx")
                    if isinstance(n_ctx, int) and n_ctx > 0:
                        return n_ctx
                response = await client.get(self._base + "/models", headers=headers)  # vLLM
                if response.status_code == 200:
                    models = response.json().get("data") or []
                    for model in models:
                        size = (
                            model.get("max_model_len")
                            or model.get("context_length")
                            or (model.get("meta") or {}).get("n_ctx")
                        )
                        if (
                            isinstance(size, int)
                            and size > 0
                            and (model.get("id") == self.model or len(models) == 1)
                        ):
                            return size
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _budget(self, n_ctx: int | None) -> tuple[int, int | None]:
        """(max_tokens, prompt budget in tokens or None when the context is unknown)."""
        if not n_ctx:
            return self.max_output_tokens, None
        max_tokens = max(16, min(self.max_output_tokens, n_ctx // 3))
        return max_tokens, n_ctx - max_tokens - CONTEXT_MARGIN_TOKENS

    def _fit(
        self, messages: list[Message], budget: int | None, chars_per_token: float
    ) -> list[Message]:
        if budget is None:
            return messages
        try:
            fitted, cut = context.fit(messages, budget, chars_per_token)
        except DoesNotFit as exc:
            raise ProviderError(f"prompt does not fit the model's context: {exc}") from exc
        self.trimmed_chars += cut
        return fitted

    async def _complete(
        self, messages: list[Message], schema_name: str, schema: dict[str, Any]
    ) -> str:
        n_ctx = await self.context_tokens()
        max_tokens, budget = self._budget(n_ctx)
        sent = self._fit(messages, budget, self.chars_per_token)
        response = await self._post(sent, schema_name, schema, max_tokens)
        refusal = _context_refusal(response)
        if (
            refusal is not None
        ):  # the context was unknown or the estimate too generous: once more, tighter
            refused_ctx, prompt_tokens = refusal
            n_ctx = refused_ctx or n_ctx or 4096
            self._n_ctx = n_ctx
            max_tokens, budget = self._budget(n_ctx)
            chars = sum(len(m["content"]) for m in sent)
            # the server counted the prompt: its own characters per token, with a margin
            ratio = 0.9 * chars / prompt_tokens if prompt_tokens else self.chars_per_token * 0.6
            response = await self._post(
                self._fit(messages, budget, min(ratio, self.chars_per_token)),
                schema_name,
                schema,
                max_tokens,
            )
        if response.status_code == 429 or response.status_code >= 500:
            raise ProviderUnavailable(f"HTTP {response.status_code}", status=response.status_code)
        if response.status_code >= 400:
            raise ProviderError(
                f"HTTP {response.status_code}: {_error_message(response)}",
                status=response.status_code,
            )
        try:
            body = response.json()
            choice = body["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"malformed chat completion: {describe(exc)}") from exc
        used = body.get("usage") or {}
        self._used(
            used.get("prompt_tokens"),
            used.get("completion_tokens"),
            truncated=choice.get("finish_reason") == "length",
        )
        if message.get("refusal"):
            raise ProviderError(f"refused: {str(message['refusal'])[:200]}")
        return message.get("content") or ""

    async def _post(
        self, messages: list[Message], schema_name: str, schema: dict[str, Any], max_tokens: int
    ) -> httpx.Response:
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            },
        }
        try:
            async with self._client() as client:
                return await client.post(self._url, json=payload, headers=self._headers())
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable(
                f"timeout after {self._timeout:g}s ({type(exc).__name__})"
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(f"transport error: {describe(exc)}") from exc


def _context_refusal(response: httpx.Response) -> tuple[int, int] | None:
    """For a 400 that says the prompt is over the context: (the server's n_ctx, the prompt's
    tokens as it counted them), 0 for what it does not say; else None."""
    if response.status_code != 400:
        return None
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict):
        return None
    text = f"{error.get('type', '')} {error.get('message', '')}".lower()
    if "context" not in text or not any(
        word in text for word in ("exceed", "too long", "maximum", "longer")
    ):
        return None
    n_ctx, n_prompt = error.get("n_ctx"), error.get("n_prompt_tokens")
    return (
        n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else 0,
        n_prompt if isinstance(n_prompt, int) and n_prompt > 0 else 0,
    )


def _error_message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("message", ""))[:200]
    except (ValueError, AttributeError):
        return response.text[:200]
