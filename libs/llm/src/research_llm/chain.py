"""The provider chain: OpenAI → Gemini → offline, first usable answer wins.

`build_chain(settings.llm)` reads `LLMSettings`: `provider="auto"` chains every remote provider
whose key is set and always ends with `offline`; `provider="openai"` / `"gemini"` forces that one
(then offline); `provider="offline"` (or no key at all) is offline alone. Each failure (timeout,
429/5xx, an answer that stays invalid after one corrective retry) is returned in `failures` so
the calling service can write one audit row per failure; the outcome names the provider and
model that produced the answer.

A run (`research_llm.usage`) bounds what the model may spend: every question asked inside one
counts in it, a run opened without a budget takes the chain's (`LLM__RUN_BUDGET_S` / `_TOKENS` /
`_USD`), and once it is spent the remote providers are not asked again in that run — the offline
engine answers and the run's `fallbacks` say why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import httpx
from pydantic import SecretStr

from research_contracts import CriticVerdict
from research_llm import metrics, usage
from research_llm.errors import (
    InvalidResponse,
    NoProviderAnswered,
    ProviderError,
    ProviderUnavailable,
)
from research_llm.grounding import ground_supports
from research_llm.offline.engine import OfflineProvider
from research_llm.offline.relevance import TextEncoder
from research_llm.prompts import Prompt
from research_llm.providers.base import Provider, SchemaAnswerer
from research_llm.schema import (
    Answered,
    ClaimDraft,
    ClaimForReview,
    DraftOutcome,
    EvidenceDoc,
    JudgeOutcome,
    Provenance,
    ProviderFailure,
    Shape,
)
from research_platform.settings import LLMSettings

_USE_DEFAULT = object()


class _Named(Protocol):
    """What the chain reads of any provider it asks: a `Provider` or a `SchemaAnswerer`."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...


_Asked = TypeVar("_Asked", bound=_Named)
_Answer = TypeVar("_Answer")


class ProviderChain:
    """Asks each provider in turn; drafting and judging never raise while `offline` is the last link."""

    def __init__(
        self,
        providers: Sequence[Provider],
        *,
        run_budget_s: float | None = None,
        run_budget_tokens: int | None = None,
        run_budget_usd: float | None = None,
    ) -> None:
        if not providers:
            raise ValueError("a provider chain needs at least one provider")
        self.providers = list(providers)
        self.budget = usage.Budget(run_budget_s, run_budget_tokens, run_budget_usd)

    def new_run(self) -> usage.Run:
        """A run's accounting with the budget of the settings (`LLM__RUN_BUDGET_S` / `_TOKENS` / `_USD`):
        enter it with `research_llm.usage.within(run)` around each of the run's questions."""
        return usage.Run(
            budget_s=self.budget.seconds,
            budget_tokens=self.budget.tokens,
            budget_usd=self.budget.usd,
        )

    def _bound(self) -> None:
        """The open run, if it has no budget yet, takes this chain's."""
        run = usage.current_run()
        if run is not None:
            run.adopt(self.budget)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.providers]

    async def draft_claim(
        self, question: str, entity: str | None, evidence: list[EvidenceDoc]
    ) -> DraftOutcome:
        """A claim draft answering `question` from `evidence`, with its provenance.

        A draft that is not the chain's last word must be usable: a statement, and — when evidence
        was offered — at least one support whose source was offered and whose quote is in it.
        Otherwise it counts as that provider's failure (with what was dropped) and the next one,
        finally the offline engine, answers.
        """

        async def draft_by(provider: Provider) -> ClaimDraft:
            draft = await provider.draft_claim(question, entity, evidence)
            if provider is not self.providers[-1]:
                _check_usable(draft, evidence)
            return draft

        draft, provenance = await self._first_answer("draft", self.providers, draft_by)
        if entity and entity.strip():
            draft = draft.model_copy(update={"entity": entity.strip()})
        _note_fallback("claim_draft", provenance.failures)
        return DraftOutcome(draft=draft, **dict(provenance))

    async def judge_claim(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None = None,
    ) -> JudgeOutcome:
        """The critic's verdict on `candidate` given the active claims of its entity."""

        async def judge_by(provider: Provider) -> CriticVerdict:
            verdict = await provider.judge_claim(candidate, active, evidence)
            if not verdict.reasoning.strip():
                raise InvalidResponse("empty reasoning")
            return verdict

        verdict, provenance = await self._first_answer(
            "judge", self.providers, judge_by, model_of=lambda provider: provider.critic_model
        )
        _note_fallback("critic_verdict", provenance.failures)
        return JudgeOutcome(verdict=verdict, **dict(provenance))

    async def ask(
        self,
        prompt: Prompt,
        shape: type[Shape],
        schema_name: str,
        *,
        timeout_s: float | None = None,
    ) -> Answered[Shape]:
        """`prompt` answered as `shape` by the first remote model that manages it.

        For questions beyond drafting and judging (e.g. the correlator's pattern confirmation).
        Only providers that answer free-form questions (`SchemaAnswerer`: the remote ones) are
        asked; the offline engine is skipped. Each gets `timeout_s` (None = its own HTTP
        timeout). Text fields of the answer still carry the prompt's placeholders: map them back
        with `prompt.restore`. Raises `NoProviderAnswered` (with the failures, possibly none)
        when no provider answered.
        """

        async def answer_by(provider: SchemaAnswerer) -> Shape:
            return await provider.answer(prompt, shape, schema_name)

        answerers = [p for p in self.providers if isinstance(p, SchemaAnswerer)]
        try:
            answer, provenance = await self._first_answer(
                schema_name, answerers, answer_by, timeout_s=timeout_s
            )
        except NoProviderAnswered as exc:
            _note_fallback(schema_name, exc.failures)
            raise
        return Answered[shape](answer=answer, **dict(provenance))  # type: ignore[valid-type]  # a runtime parametrisation: the answer validates as `shape`

    async def _first_answer(
        self,
        operation: str,
        providers: Sequence[_Asked],
        ask: Callable[[_Asked], Awaitable[_Answer]],
        *,
        model_of: Callable[[_Asked], str] | None = None,
        timeout_s: float | None = None,
    ) -> tuple[_Answer, Provenance]:
        """The first answer `ask` gets from one of `providers` in turn, with who gave it.

        Every question counts in the open run (which takes this chain's budget if it has none),
        in the metrics under `operation` and in the answer's usage, the failed ones too. A
        provider that raises `ProviderError` or gives no answer within `timeout_s` is a failure
        (its model is `model_of(provider)`, by default `provider.model`); raises
        `NoProviderAnswered` when every one failed.
        """
        self._bound()
        failures: list[ProviderFailure] = []
        spent = usage.Usage()
        for provider in providers:
            model = model_of(provider) if model_of is not None else provider.model
            try:
                with metrics.call(provider.name, operation), usage.collect() as used:
                    try:
                        answer = await asyncio.wait_for(ask(provider), timeout_s)
                    finally:
                        spent.add(used)
            except ProviderError as exc:
                failures.append(_failure(provider.name, model, exc))
                continue
            except TimeoutError:
                no_answer = ProviderUnavailable(f"no answer within {timeout_s}s")
                failures.append(_failure(provider.name, model, no_answer))
                continue
            provenance = Provenance(
                provider=provider.name, model=model, failures=failures, usage=spent.as_dict()
            )
            return answer, provenance
        raise NoProviderAnswered(failures)


def _note_fallback(question: str, failures: list[ProviderFailure]) -> None:
    """A question no remote model answered usably goes into the open runs' `fallbacks` (with no
    remote model configured there are no failures, and nothing to note)."""
    if failures:
        usage.fell_back(question, [f"{f.provider}: {f.reason}" for f in failures])


def _check_usable(draft: ClaimDraft, evidence: list[EvidenceDoc]) -> None:
    """Raise `InvalidResponse` for a draft nothing usable remains of once its citations are checked."""
    if not draft.statement.strip():
        raise InvalidResponse("empty claim statement")
    if not evidence:
        return
    grounded = ground_supports(draft, evidence)
    if not grounded.kept:
        raise InvalidResponse(
            f"no usable citation: {len(draft.supports)} support(s), {grounded.unknown_source} naming a source never "
            f"offered, {grounded.quote_not_found} quoting text not in its source"
        )


def _failure(provider: str, model: str, exc: ProviderError) -> ProviderFailure:
    return ProviderFailure(provider=provider, model=model, reason=exc.reason, status=exc.status)


def remote_names(settings: LLMSettings) -> list[str]:
    """The remote providers `settings` ask for, in the order asked: `auto` = OpenAI then Gemini,
    each when its key is set; `openai` / `gemini` = that one; `offline` = none."""
    choice = (settings.provider or "auto").strip().lower()
    if choice not in {"auto", "offline", "openai", "gemini"}:
        raise ValueError(f"unknown LLM provider {choice!r}: use auto, openai, gemini or offline")
    names = []
    if choice in {"auto", "openai"} and (_secret(settings.openai_api_key) or choice == "openai"):
        names.append("openai")
    if choice in {"auto", "gemini"} and (_secret(settings.gemini_api_key) or choice == "gemini"):
        names.append("gemini")
    return names


def build_chain(
    settings: LLMSettings,
    *,
    encoder: TextEncoder | object | None = _USE_DEFAULT,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ProviderChain:
    """The chain `settings` asks for.

    `encoder` overrides the offline engine's embedder (None = lexical only); `transport` is
    passed to the HTTP clients of the remote providers (tests use it for fault injection).
    """
    wanted = remote_names(settings)
    # what every remote provider is given besides its key, address and model
    shared: dict[str, Any] = {
        "timeout_s": settings.timeout_s,
        "concurrency": settings.concurrency,
        "prices": settings.prices,
    }
    remote: list[Provider] = []
    if "openai" in wanted:
        from research_llm.providers.openai import OpenAIProvider

        remote.append(
            OpenAIProvider(
                api_key=_secret(settings.openai_api_key) or "",
                base_url=settings.openai_base_url,
                model=settings.openai_model,
                transport=transport,
                max_output_tokens=settings.max_output_tokens,
                context_tokens=settings.context_tokens,
                chars_per_token=settings.chars_per_token,
                schema_lengths={"on": True, "off": False}.get(
                    (settings.schema_lengths or "auto").lower()
                ),
                **shared,
            )
        )
    if "gemini" in wanted:
        from research_llm.providers.gemini import GeminiProvider

        remote.append(
            GeminiProvider(
                api_key=_secret(settings.gemini_api_key) or "",
                base_url=settings.gemini_base_url,
                model=settings.gemini_model,
                **shared,
            )
        )
    offline = OfflineProvider() if encoder is _USE_DEFAULT else OfflineProvider(encoder)
    return ProviderChain(
        [*remote, offline],
        run_budget_s=settings.run_budget_s,
        run_budget_tokens=settings.run_budget_tokens,
        run_budget_usd=settings.run_budget_usd,
    )


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None
