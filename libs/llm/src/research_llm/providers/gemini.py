"""Google Gemini through the maintained `google-genai` SDK (the older `google-generativeai`
package is deprecated), with a JSON `response_json_schema`.

`LLM__GEMINI_BASE_URL` overrides the endpoint (tests point it at a local fake server speaking
the `generateContent` wire format). SDK retries are off: a timeout, 429 or 5xx goes straight to
the next provider of the chain.
"""

from __future__ import annotations

from typing import Any

import httpx

from research_llm.errors import ProviderError, ProviderUnavailable
from research_llm.providers.remote import Message, RemoteProvider, describe


class GeminiProvider(RemoteProvider):
    name = "gemini"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        model: str = "gemini-2.0-flash",
        timeout_s: float = 30.0,
        concurrency: int = 4,
        prices: dict[str, tuple[float, float]] | None = None,
    ) -> None:
        # string lengths are not in the JSON-schema subset Gemini documents: sent without them
        super().__init__(
            model=model,
            timeout_s=timeout_s,
            concurrency=concurrency,
            prices=prices,
            schema_lengths=False,
        )
        self._api_key = api_key
        self._base_url = base_url

    def _client(self) -> Any:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            timeout=int(self._timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
            **({"base_url": self._base_url} if self._base_url else {}),
        )
        return genai.Client(api_key=self._api_key or "unset", http_options=options)

    async def _complete(
        self, messages: list[Message], schema_name: str, schema: dict[str, Any]
    ) -> str:
        from google.genai import errors, types

        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        contents = [
            types.Content(
                role="model" if m["role"] == "assistant" else "user",
                parts=[types.Part(text=m["content"])],
            )
            for m in messages
            if m["role"] != "system"
        ]
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=0,
            response_mime_type="application/json",
            response_json_schema=schema,
        )
        client = self._client()
        try:
            response = await client.aio.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        except errors.APIError as exc:
            code = getattr(exc, "code", None)
            if code == 429 or (isinstance(code, int) and code >= 500):
                raise ProviderUnavailable(f"HTTP {code}", status=code) from exc
            raise ProviderError(
                f"HTTP {code}: {str(getattr(exc, 'message', ''))[:200]}", status=code
            ) from exc
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise ProviderUnavailable(
                f"timeout after {self._timeout:g}s ({type(exc).__name__})"
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(f"transport error: {describe(exc)}") from exc
        except Exception as exc:
            if "timeout" in type(exc).__name__.lower():
                raise ProviderUnavailable(
                    f"timeout after {self._timeout:g}s ({type(exc).__name__})"
                ) from exc
            raise ProviderError(f"gemini call failed: {describe(exc)}") from exc
        usage = response.usage_metadata
        if usage is not None:
            self._used(usage.prompt_token_count, usage.candidates_token_count)
        text: str | None = response.text
        if not text:
            reason = None
            if response.candidates:
                reason = response.candidates[0].finish_reason
            raise ProviderError(f"empty answer (finish_reason={reason})")
        return text
