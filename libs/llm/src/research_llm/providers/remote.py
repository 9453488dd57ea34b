"""What the remote providers share: privacy-guarded prompts, schema-validated answers and the
one corrective retry.

A subclass only implements `_complete(messages, schema_name, schema)`: send the conversation,
return the model's text, and raise `ProviderUnavailable` for timeouts, transport faults,
429 and 5xx (the chain moves on) or `ProviderError` for other refusals (401, 400…).
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from research_contracts import CriticVerdict
from research_llm import prompts
from research_llm.errors import InvalidResponse
from research_llm.schema import ClaimDraft, ClaimForReview, EvidenceDoc, SupportDraft, VerdictDraft

Answer = TypeVar("Answer", bound=BaseModel)
Message = dict[str, str]


class RemoteProvider:
    """Base of the OpenAI and Gemini providers."""

    name = "remote"

    def __init__(self, *, model: str) -> None:
        self.model = model
        self.critic_model = model

    async def _complete(self, messages: list[Message], schema_name: str, schema: dict[str, Any]) -> str:
        raise NotImplementedError

    async def draft_claim(self, question: str, entity: str | None, evidence: list[EvidenceDoc]) -> ClaimDraft:
        prompt = prompts.researcher_prompt(question, entity, evidence)
        draft = await self.answer(prompt, ClaimDraft, "claim_draft")
        return ClaimDraft(
            statement=prompt.restore(draft.statement),
            entity=prompt.restore(draft.entity),
            confidence=draft.confidence,
            supports=[
                SupportDraft(source_id=s.source_id, quote=prompt.restore(s.quote), locator=s.locator)
                for s in draft.supports
            ],
        )

    async def judge_claim(
        self, candidate: ClaimForReview, active: list[ClaimForReview], evidence: list[EvidenceDoc] | None
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
        schema = strict_schema(shape)
        messages: list[Message] = [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ]
        text = await self._complete(messages, schema_name, schema)
        try:
            return parse(text, shape)
        except InvalidResponse as first:
            messages += [
                {"role": "assistant", "content": text[:4000]},
                {"role": "user", "content": prompts.correction(first.reason)},
            ]
        text = await self._complete(messages, schema_name, schema)
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
        errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:8])
        raise InvalidResponse(errors or "invalid JSON") from exc


_UNSUPPORTED = {"default", "minLength", "maxLength", "minimum", "maximum", "examples", "format"}


def strict_schema(shape: type[BaseModel]) -> dict[str, Any]:
    """`shape`'s JSON schema in the strict subset OpenAI accepts (every property required,
    no extra properties, no unsupported keywords). Pydantic still enforces the full model."""
    schema = copy.deepcopy(shape.model_json_schema())

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for key in list(node):
                if key in _UNSUPPORTED:
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
