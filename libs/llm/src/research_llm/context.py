"""The context budget of one call: the prompt trimmed to fit the model's context.

A prompt is instructions plus untrusted data blocks (each between `DATA_MARKER` lines: the
question, every evidence document, every claim). When the estimated size of the conversation
is over the budget, the data blocks are cut from their end, the longest first ("water-filling":
every block keeps min(its length, c) characters, c the largest cap that fits), so every document
keeps its id line and its opening, and the instructions stay whole. Quotes the model copies from
the kept text are still substrings of the full source, so the citation checks are unchanged.

Size is estimated as characters / `chars_per_token` (3.0 by default: conservative for English
and for the numbers, units and ids of abstracts); the provider retries once with a tighter
estimate if a server still refuses the prompt as too long.
"""

from __future__ import annotations

import re

from research_llm.errors import DoesNotFit
from research_privacy import DATA_MARKER

MESSAGE_OVERHEAD_TOKENS = 8  # chat-template tokens around one message
ELLIPSIS = " […]"
_BLOCK = re.compile(re.escape(DATA_MARKER) + r"\n(.*?)\n" + re.escape(DATA_MARKER), re.DOTALL)


def estimate_tokens(messages: list[dict[str, str]], chars_per_token: float) -> int:
    return sum(int(len(m["content"]) / chars_per_token) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def fit(
    messages: list[dict[str, str]], budget_tokens: int, chars_per_token: float
) -> tuple[list[dict[str, str]], int]:
    """`messages` trimmed to `budget_tokens` (estimated), and how many characters were cut.

    Only the data blocks of user messages are cut. Raises `DoesNotFit` when the rest alone is
    over the budget.
    """
    if estimate_tokens(messages, chars_per_token) <= budget_tokens:
        return messages, 0
    budget_chars = int((budget_tokens - MESSAGE_OVERHEAD_TOKENS * len(messages)) * chars_per_token)
    blocks: list[tuple[int, re.Match[str]]] = [
        (i, match)
        for i, m in enumerate(messages)
        if m["role"] == "user"
        for match in _BLOCK.finditer(m["content"])
    ]
    data_chars = sum(len(match.group(1)) for _, match in blocks)
    fixed_chars = (
        sum(len(m["content"]) for m in messages) - data_chars + len(ELLIPSIS) * len(blocks)
    )
    room = budget_chars - fixed_chars
    if room < 0 or not blocks:
        raise DoesNotFit(
            f"instructions alone need ~{int(fixed_chars / chars_per_token)} tokens; budget {budget_tokens}"
        )
    cap = _water_level([len(match.group(1)) for _, match in blocks], room)
    out = [dict(m) for m in messages]
    cut = 0
    for index in {i for i, _ in blocks}:

        def shorten(match: re.Match[str]) -> str:
            nonlocal cut
            body = match.group(1)
            if len(body) <= cap:
                return match.group(0)
            kept = body[:cap].rstrip()
            cut += len(body) - len(kept)
            return f"{DATA_MARKER}\n{kept}{ELLIPSIS}\n{DATA_MARKER}"

        out[index]["content"] = _BLOCK.sub(shorten, messages[index]["content"])
    return out, cut


def _water_level(lengths: list[int], room: int) -> int:
    """The largest cap c with sum(min(length, c)) <= room."""
    ordered = sorted(lengths)
    remaining = room
    for n, length in enumerate(ordered):
        share = remaining // (len(ordered) - n)
        if length > share:
            return share
        remaining -= length
    return ordered[-1] if ordered else 0
