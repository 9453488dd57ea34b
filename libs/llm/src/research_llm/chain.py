"""The provider chain: OpenAI → Gemini → offline, first usable answer wins.

`build_chain(settings.llm)` reads `LLMSettings`: `provider="auto"` chains every remote provider
whose key is set and always ends with `offline`; `provider="openai"` / `"gemini"` forces that one
(then offline); `provider="offline"` (or no key at all) is offline alone. Each failure (timeout,
429/5xx, an answer that stays invalid after one corrective retry) is returned in `failures` so
the calling service can write one audit row per failure; the outcome names the provider and
model that produced the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx
from pydantic import SecretStr

from research_llm import metrics
from research_llm.errors import NoProviderAnswered, ProviderError, ProviderUnavailable
from research_llm.offline.engine import OfflineProvider
from research_llm.offline.relevance import TextEncoder
from research_llm.prompts import Prompt
from research_llm.providers.base import Provider, SchemaAnswerer
from research_llm.schema import (
    Answered,
    ClaimForReview,
    DraftOutcome,
    EvidenceDoc,
    JudgeOutcome,
    ProviderFailure,
    Shape,
)
from research_platform.settings import LLMSettings

_USE_DEFAULT = object()


class ProviderChain:
    """Asks each provider in turn; drafting and judging never raise while `offline` is the last link."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        if not providers:
            raise ValueError("a provider chain needs at least one provider")
        self.providers = list(providers)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.providers]

    async def draft_claim(self, question: str, entity: str | None, evidence: list[EvidenceDoc]) -> DraftOutcome:
        """A claim draft answering `question` from `evidence`, with its provenance."""
        failures: list[ProviderFailure] = []
        for provider in self.providers:
            try:
                with metrics.call(provider.name, "draft"):
                    draft = await provider.draft_claim(question, entity, evidence)
            except ProviderError as exc:
                failures.append(_failure(provider, provider.model, exc))
                continue
            if entity and entity.strip():
                draft = draft.model_copy(update={"entity": entity.strip()})
            return DraftOutcome(draft=draft, provider=provider.name, model=provider.model, failures=failures)
        raise NoProviderAnswered(failures)

    async def judge_claim(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None = None,
    ) -> JudgeOutcome:
        """The critic's verdict on `candidate` given the active claims of its entity."""
        failures: list[ProviderFailure] = []
        for provider in self.providers:
            model = provider.critic_model
            try:
                with metrics.call(provider.name, "judge"):
                    verdict = await provider.judge_claim(candidate, active, evidence)
            except ProviderError as exc:
                failures.append(_failure(provider, model, exc))
                continue
            return JudgeOutcome(verdict=verdict, provider=provider.name, model=model, failures=failures)
        raise NoProviderAnswered(failures)


    async def ask(
        self, prompt: Prompt, shape: type[Shape], schema_name: str, *, timeout_s: float | None = None
    ) -> Answered[Shape]:
        """`prompt` answered as `shape` by the first remote model that manages it.

        For questions beyond drafting and judging (e.g. the correlator's pattern confirmation).
        Only providers that answer free-form questions (`SchemaAnswerer`: the remote ones) are
        asked; the offline engine is skipped. Each gets `timeout_s` (None = its own HTTP
        timeout). Text fields of the answer still carry the prompt's placeholders: map them back
        with `prompt.restore`. Raises `NoProviderAnswered` (with the failures, possibly none)
        when no provider answered.
        """
        failures: list[ProviderFailure] = []
        for provider in self.providers:
            if not isinstance(provider, SchemaAnswerer):
                continue
            try:
                with metrics.call(provider.name, schema_name):
                    answer = await asyncio.wait_for(provider.answer(prompt, shape, schema_name), timeout_s)
            except ProviderError as exc:
                failures.append(_failure(provider, provider.model, exc))
                continue
            except TimeoutError:
                failures.append(_failure(provider, provider.model, ProviderUnavailable(f"no answer within {timeout_s}s")))
                continue
            return Answered[shape](answer=answer, provider=provider.name, model=provider.model, failures=failures)
        raise NoProviderAnswered(failures)


def _failure(provider: Provider, model: str, exc: ProviderError) -> ProviderFailure:
    return ProviderFailure(provider=provider.name, model=model, reason=exc.reason, status=exc.status)


def build_chain(
    settings: LLMSettings,
    *,
    encoder: TextEncoder | None | object = _USE_DEFAULT,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ProviderChain:
    """The chain `settings` asks for.

    `encoder` overrides the offline engine's embedder (None = lexical only); `transport` is
    passed to the HTTP clients of the remote providers (tests use it for fault injection).
    """
    choice = (settings.provider or "auto").strip().lower()
    openai_key = _secret(settings.openai_api_key)
    gemini_key = _secret(settings.gemini_api_key)
    remote: list[Provider] = []
    if choice not in {"auto", "offline", "openai", "gemini"}:
        raise ValueError(f"unknown LLM provider {choice!r}: use auto, openai, gemini or offline")
    if choice in {"auto", "openai"} and (openai_key or choice == "openai"):
        from research_llm.providers.openai import OpenAIProvider

        remote.append(
            OpenAIProvider(
                api_key=openai_key or "",
                base_url=settings.openai_base_url,
                model=settings.openai_model,
                timeout_s=settings.timeout_s,
                transport=transport,
            )
        )
    if choice in {"auto", "gemini"} and (gemini_key or choice == "gemini"):
        from research_llm.providers.gemini import GeminiProvider

        remote.append(
            GeminiProvider(
                api_key=gemini_key or "",
                base_url=settings.gemini_base_url,
                model=settings.gemini_model,
                timeout_s=settings.timeout_s,
            )
        )
    offline = OfflineProvider() if encoder is _USE_DEFAULT else OfflineProvider(encoder)
    return ProviderChain([*remote, offline])


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None
