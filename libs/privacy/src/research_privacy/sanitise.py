"""Untrusted text made safe to put in a prompt: no control characters, no instructions.

`sanitise` normalises Unicode (NFKC), drops control and invisible formatting characters
(zero-width, bidi overrides) and replaces prompt-injection phrasing — "ignore previous
instructions", role markers, chat-template tokens, our own data delimiters — with a neutral
placeholder, so evidence text can never speak as the system or close its own data block.
`delimit` then wraps the result between `<<<CLINICAL_DATA>>>` markers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

DATA_MARKER = "<<<CLINICAL_DATA>>>"
NEUTRALISED = "[instruction removed]"

_KEEP = {"\n", "\t"}
_INJECTIONS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"<{2,}\s*/?\s*clinical[_ ]data\s*>{2,}",
        (
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|all|"
            r"the|your|any|system|these)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules?|directions?|guidelines?|"
            r"context|messages?)\b"
        ),
        r"\b(?:you are now|from now on,? you|act as|pretend (?:to be|you are)|roleplay as|you must now)\b",
        r"\b(?:new|updated|revised|real) instructions?\s*:",
        r"\b(?:system|developer)\s+(?:prompt|message|instructions?)\b",
        r"\breveal (?:your|the) (?:prompt|instructions|system)\b",
        r"(?m)^\s*(?:system|assistant|user|developer)\s*:",
        r"<\|[a-z_]{2,20}\|>",
        r"\[/?(?:INST|SYS)\]|<</?SYS>>",
        r"(?m)^\s*#{2,}\s*(?:instruction|system|response)s?\b",
        r"</?(?:system|instructions?|prompt)>",
    )
)


@dataclass(slots=True)
class Sanitised:
    """The cleaned text and what was neutralised (for audit; never the removed characters)."""

    text: str
    neutralised: list[str] = field(default_factory=list)
    control_chars: int = 0


def sanitise_report(text: str) -> Sanitised:
    """`sanitise` plus a record of what it changed."""
    normalised = unicodedata.normalize("NFKC", text or "")
    kept: list[str] = []
    dropped = 0
    for ch in normalised:
        category = unicodedata.category(ch)
        if ch in _KEEP:
            kept.append(ch)
        elif ch == "\r":
            kept.append("\n")
        elif category in {"Cc", "Cf", "Cs", "Co", "Cn"}:
            dropped += 1
        elif category in {"Zl", "Zp"}:
            kept.append("\n")
        else:
            kept.append(ch)
    cleaned = "".join(kept)
    found: list[str] = []
    for pattern in _INJECTIONS:

        def replace(match: re.Match[str]) -> str:
            found.append(match.group(0).strip())
            return NEUTRALISED

        cleaned = pattern.sub(replace, cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    return Sanitised(text=cleaned, neutralised=found, control_chars=dropped)


def sanitise(text: str) -> str:
    """Untrusted text with control characters removed and injection phrasing neutralised."""
    return sanitise_report(text).text


def delimit(text: str) -> str:
    """`text` between `<<<CLINICAL_DATA>>>` markers; markers inside it are neutralised first.

    The model is told (in the system prompt) that everything between the markers is data to
    analyse, never instructions to follow.
    """
    body = text or ""
    if "<<" in body:
        body = _INJECTIONS[0].sub(NEUTRALISED, body)
    return f"{DATA_MARKER}\n{body}\n{DATA_MARKER}"
