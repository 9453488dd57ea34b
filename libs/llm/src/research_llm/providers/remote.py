"""What the remote providers share: privacy-guarded prompts, schema-validated answers and the
one corrective retry, a per-provider concurrency limit, a wall-clock timeout per request (cut to
what is left of the run's budget) and token / cost accounting.

A subclass only implements `_complete(messages, schema_name, schema)`: send the conversation,
return the model's text (reporting the tokens used with `self._used`), and raise
`ProviderUnavailable` for timeouts, transport faults, 429 and 5xx (the chain moves on) or
`ProviderError` for other refusals (401, 400…).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import json
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from research_contracts import CriticVerdict
from research_llm import metrics, prompts, usage
from research_llm.errors import InvalidResponse, ProviderUnavailable
from research_llm.schema import ClaimDraft, ClaimForReview, EvidenceDoc, SupportDraft, VerdictDraft

Answer = TypeVar("Answer", bound=BaseModel)
Message = dict[str, str]
_TOKENS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "research_llm_request_tokens", default=None
)


class RemoteProvider:
    """Base of the OpenAI and Gemini providers."""

    name = "remote"

    def __init__(
        self,
        *,
        model: str,
        timeout_s: float = 30.0,
        concurrency: int = 4,
        prices: Mapping[str, tuple[float, float]] | None = None,
        schema_lengths: bool = True,
    ) -> None:
        self.model = model
        self.critic_model = model
        self._timeout = timeout_s
        self._limit = asyncio.Semaphore(max(1, concurrency))
        self._prices = dict(prices or {})
        self.schema_lengths = schema_lengths
        self._truncated: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"truncated_{id(self)}", default=False
        )

    def _used(
        self, tokens_in: int | None, tokens_out: int | None, *, truncated: bool = False
    ) -> None:
        """What the API reported for the request in flight (`usage` / `usageMetadata`, and whether
        the answer stopped at `max_tokens`)."""
        metrics.tokens(self.name, tokens_in, tokens_out)
        slot = _TOKENS.get()
        if slot is not None:
            slot[0] += tokens_in or 0
            slot[1] += tokens_out or 0
            slot[2] = int(truncated)

    async def _request(
        self, messages: list[Message], schema_name: str, schema: dict[str, Any]
    ) -> str:
        """One request: within the provider's concurrency limit, the per-request timeout (or what
        is left of the run's budget, if less) and accounted in the call's and the run's usage."""
        timeout = (
            self._timeout * 2 + 5.0
        )  # the HTTP timeout is per read (and SDK set-up is outside it): this bounds the whole request
        spent = usage.exhausted()
        if spent:
            raise ProviderUnavailable(spent)
        left = usage.remaining_s()
        if left is not None:
            timeout = min(timeout, max(left, 0.001))
        async with self._limit:
            slot = [0, 0, 0]
            clock = usage.Stopwatch()
            token = _TOKENS.set(slot)
            try:
                return await asyncio.wait_for(
                    self._complete(messages, schema_name, schema), timeout
                )
            except TimeoutError as exc:
                raise ProviderUnavailable(
                    f"timeout after {timeout:g}s (no complete answer)"
                ) from exc
            finally:
                _TOKENS.reset(token)
                self._truncated.set(bool(slot[2]))
                usage.record(
                    self.name,
                    self.model,
                    slot[0],
                    slot[1],
                    usage.price(self._prices, self.model, slot[0], slot[1]),
                    clock(),
                )

    async def _complete(
        self, messages: list[Message], schema_name: str, schema: dict[str, Any]
    ) -> str:
        raise NotImplementedError

    async def draft_claim(
        self, question: str, entity: str | None, evidence: list[EvidenceDoc]
    ) -> ClaimDraft:
        prompt = prompts.researcher_prompt(question, entity, evidence)
        draft = await self.answer(prompt, ClaimDraft, "claim_draft")
        return ClaimDraft(
            statement=prompt.restore(draft.statement),
            entity=prompt.restore(draft.entity),
            confidence=draft.confidence,
            supports=[
                SupportDraft(
                    source_id=s.source_id, quote=prompt.restore(s.quote), locator=s.locator
                )
                for s in draft.supports
            ],
        )

    async def judge_claim(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None,
    ) -> CriticVerdict:
        prompt = prompts.critic_prompt(candidate, active, evidence)
        answer = await self.answer(prompt, VerdictDraft, "critic_verdict")
        supersedes: list[uuid.UUID] = []
        for raw in answer.supersedes:
            try:
                supersedes.append(uuid.UUID(str(raw)))
            except ValueError:
                continue
        return CriticVerdict(
            verdict=answer.verdict,
            score=answer.score,
            reasoning=prompt.restore(answer.reasoning),
            supersedes=supersedes,
            model=self.model,
        )

    async def answer(self, prompt: prompts.Prompt, shape: type[Answer], schema_name: str) -> Answer:
        """`prompt` answered as `shape` (a strict JSON schema named `schema_name`).

        Asks, validates, and on an invalid answer asks once more with the validation error;
        raises `InvalidResponse` when the second answer is invalid too.
        """
        schema = strict_schema(shape, lengths=self.schema_lengths)
        messages: list[Message] = [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ]
        text = await self._request(messages, schema_name, schema)
        try:
            return parse(text, shape)
        except InvalidResponse as first:
            reason = first.reason
            if (
                self._truncated.get()
            ):  # cut off at max_tokens: the retry must be shorter, not just valid
                reason = (
                    "the answer was cut off at the token limit before the JSON ended. Answer with fewer items "
                    "and shorter strings. " + reason
                )
            messages += [
                {"role": "assistant", "content": text[:1000]},
                {"role": "user", "content": prompts.correction(reason)},
            ]
        text = await self._request(messages, schema_name, schema)
        try:
            return parse(text, shape)
        except InvalidResponse as second:
            raise InvalidResponse(f"invalid after one retry: {second.reason}") from second


def parse(text: str, shape: type[Answer]) -> Answer:
    """The answer validated against `shape`; a fenced ```json block is accepted."""
    body = (text or "").strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    try:
        return shape.model_validate_json(body)
    except ValidationError as exc:
        errors = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:8]
        )
        raise InvalidResponse(errors or "invalid JSON") from exc


_UNSUPPORTED = {"default", "examples", "format"}
_LENGTHS = {"minLength", "maxLength"}


def strict_schema(shape: type[BaseModel], *, lengths: bool = True) -> dict[str, Any]:
    """`shape`'s JSON schema in the strict subset structured-output servers accept: every
    property required, no extra properties, no defaults or formats; the bounds a small model
    needs kept (`maxItems` / `minItems`, `enum`, `minimum` / `maximum`, and string lengths
    unless `lengths` is False — OpenAI's strict mode rejects `minLength` / `maxLength`).
    llama.cpp and vLLM compile the schema into a grammar, so the bounds hold while the model
    writes; pydantic still enforces the full model on the answer."""
    schema = copy.deepcopy(shape.model_json_schema())
    drop = _UNSUPPORTED | (set() if lengths else _LENGTHS)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for key in list(node):
                if key in drop and not isinstance(node.get(key), dict):
                    del node[key]
            if node.get("type") == "object" and "properties" in node:
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(schema)
    return schema


def describe(exc: BaseException) -> str:
    """A short, secret-free reason for an audit row."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return text[:300]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
