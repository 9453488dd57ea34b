"""`research-engine llm check`: is the configured model server usable by the engines?

Sends the configured provider (`LLM__PROVIDER`, `LLM__OPENAI_BASE_URL`, `LLM__OPENAI_MODEL`, …;
options override) two small schema-bound requests and prints what works: the models the server
lists, its context size, whether it enforces `response_format: json_schema` (the second request
asks for prose while the schema demands JSON: a server that enforces the schema still answers
JSON), latency, tokens in / out, tokens/s and the estimated cost. Exit code 0 when the
schema-bound answer validates, 1 otherwise. See docs/local-models.md.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Literal

import httpx
import typer
from pydantic import BaseModel, Field, SecretStr, ValidationError

from research_llm import build_chain
from research_llm.errors import ProviderError
from research_llm.providers.openai import OpenAIProvider
from research_llm.providers.remote import RemoteProvider, strict_schema
from research_llm.usage import collect
from research_platform.settings import get_settings

llm_app = typer.Typer(
    help="Check the configured LLM provider (local servers: docs/local-models.md).",
    no_args_is_help=True,
)


class CheckAnswer(BaseModel):
    """The probe's schema: an enum, a bounded integer and a bounded array of short strings."""

    answer: Literal["yes", "no"]
    count: int = Field(ge=1, le=5)
    colours: list[str] = Field(
        max_length=3, json_schema_extra={"items": {"type": "string", "maxLength": 20}}
    )


SYSTEM = "You answer with JSON only, matching the schema."
QUESTION = "Is the sky blue on a clear day? Also: how many primary colours are there (count), and name up to three (colours)."
PROSE = "Do not use JSON or braces. Reply with one plain English sentence about the weather."


@llm_app.command("check")
def check(
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="Override LLM__OPENAI_BASE_URL (e.g. http://localhost:11434/v1)."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Override the model name.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 120.0,
) -> None:
    """Send one schema-bound request to the configured provider and print what works."""
    settings = get_settings().llm.model_copy()
    if base_url:
        settings = settings.model_copy(
            update={
                "provider": "openai",
                "openai_base_url": base_url,
                "openai_api_key": settings.openai_api_key or SecretStr(""),
            }
        )
    if model:
        settings = settings.model_copy(
            update={"openai_model": model}
            if settings.provider != "gemini"
            else {"gemini_model": model}
        )
    settings = settings.model_copy(update={"timeout_s": timeout})
    chain = build_chain(settings, encoder=None)
    provider = chain.providers[0]
    if not isinstance(provider, RemoteProvider):
        typer.echo(
            "provider: offline (no model configured: set LLM__PROVIDER=openai and LLM__OPENAI_BASE_URL; docs/local-models.md)"
        )
        raise typer.Exit(1)
    ok = asyncio.run(_check(provider))
    raise typer.Exit(0 if ok else 1)


async def _check(provider: RemoteProvider) -> bool:
    typer.echo(f"provider: {provider.name}  model: {provider.model}")
    if isinstance(provider, OpenAIProvider):
        typer.echo(f"base url: {provider._base}")
        typer.echo(f"models listed: {await _models(provider)}")
        n_ctx = await provider.context_tokens()
        typer.echo(
            f"context: {n_ctx if n_ctx else 'not reported (set LLM__CONTEXT_TOKENS)'} tokens"
        )
    schema = strict_schema(CheckAnswer, lengths=provider.schema_lengths)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    with collect() as used:
        try:
            text = await provider._request(messages, "llm_check", schema)
        except ProviderError as exc:
            typer.echo(f"request: FAILED — {exc.reason}")
            return False
    valid = _validates(text)
    rate = used.tokens_out / used.seconds if used.seconds else 0.0
    typer.echo(f"schema-bound answer: {'valid' if valid else 'INVALID'} — {text.strip()[:200]}")
    typer.echo(
        f"latency: {used.seconds:.2f} s  tokens in/out: {used.tokens_in}/{used.tokens_out}  "
        f"~{rate:.1f} tokens/s  cost: ${used.cost_usd:.6f}"
    )
    prose = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROSE}]
    try:
        text = await provider._request(prose, "llm_check", schema)
        enforced = (
            "enforced"
            if _validates(text)
            else "NOT enforced (the server let the model answer outside the schema)"
        )
    except ProviderError as exc:
        enforced = f"unknown ({exc.reason})"
    typer.echo(f"response_format json_schema: {enforced}")
    return valid


def _validates(text: str) -> bool:
    try:
        CheckAnswer.model_validate_json(text.strip())
    except (ValidationError, ValueError):
        return False
    return True


async def _models(provider: OpenAIProvider) -> str:
    try:
        async with provider._client(timeout=10.0) as client:
            response = await client.get(provider._base + "/models", headers=provider._headers())
        ids = [m.get("id") for m in response.json().get("data") or []]
    except (httpx.HTTPError, ValueError, AttributeError, json.JSONDecodeError) as exc:
        return f"unknown ({type(exc).__name__})"
    if provider.model not in ids:
        return f"{ids} — '{provider.model}' is not among them (Ollama and vLLM need the exact name)"
    return str(ids)
