"""What every provider offers: draft a claim from evidence, judge a claim against the ledger.

Remote models also answer free-form questions bound to a JSON schema (`SchemaAnswerer`); the
offline engine does not, so the chain skips it for those.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from research_contracts import CriticVerdict
from research_llm.prompts import Prompt
from research_llm.schema import ClaimDraft, ClaimForReview, EvidenceDoc

Answer = TypeVar("Answer", bound=BaseModel)


class Provider(Protocol):
    """One model behind one API. Failures raise `research_llm.errors.ProviderError`."""

    name: str
    model: str
    critic_model: str  # the model that judges claims (the offline engine names its critic apart)

    async def draft_claim(
        self, question: str, entity: str | None, evidence: list[EvidenceDoc]
    ) -> ClaimDraft: ...

    async def judge_claim(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None,
    ) -> CriticVerdict: ...


@runtime_checkable
class SchemaAnswerer(Protocol):
    """A provider that answers any prompt with JSON validated against a pydantic model."""

    name: str
    model: str

    async def answer(self, prompt: Prompt, shape: type[Answer], schema_name: str) -> Answer: ...
