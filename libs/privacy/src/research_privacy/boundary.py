"""The privacy boundary: text a person typed is de-identified once, where it enters.

Every free-text field a person fills in (a task's question and patient context, a review
topic, a claim to verify, a source-list prompt and its keywords, MCP tool arguments) is typed
`PersonText` in the message contracts. Parsing a command — the gateway reading an HTTP body, a
service reading a message that arrived straight on the bus — therefore replaces every
identifier with a numbered placeholder (`[NAME_1]`) before anything else sees the text, so
only de-identified text is stored, published, audited or sent out. De-identifying twice is a
no-op (placeholders are kept), so a command parsed at the gateway and again by its consumer
comes out the same.

The storage layer checks what it is given (`require_clean`): text in which the de-identifier
still finds an identifier did not pass the boundary, and is refused (`UncleanText`) instead of
being written.

    from research_privacy.boundary import PersonText, person_text, require_clean
    person_text("Does metformin help Jane Roe?")   # 'Does metformin help [NAME_1]?'
    require_clean("Jane Roe, MRN 12345678", what="review topic")   # raises UncleanText
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated

from pydantic import AfterValidator

from research_privacy.deidentify import Deidentified, deidentify, find_identifiers
from research_privacy.errors import UncleanText

PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]?", re.IGNORECASE)  # keys lowercase them: "[date_1]"


def person_text(value: str, *, into: Deidentified | None = None) -> str:
    """`value` with every identifier replaced by a placeholder (idempotent).

    `into` shares one placeholder table between several fields of one command (a question and
    its patient context), so one person keeps one placeholder.
    """
    if not value:
        return value
    table = into if into is not None else Deidentified(text="")
    text = value
    # A placeholder can make a neighbour read as an identifier: repeat to the fixpoint, which
    # `require_clean` then accepts (one detector, one decision). Each pass that changes the text
    # turns characters outside placeholders into placeholders, so the loop ends.
    while True:
        before = text
        text = deidentify(text, into=table).text
        if text == before or not identifiers_left(text):
            return (
                text  # nothing replaced means nothing found: `require_clean` finds nothing either
            )


def identifiers_left(text: str) -> list[str]:
    """The categories of identifiers still in `text`, placeholders aside (empty when clean)."""
    if not text:
        return []
    spans = [m.span() for m in PLACEHOLDER.finditer(text)]
    left = []
    for found in find_identifiers(text):
        if any(start < found.end and found.start < end for start, end in spans):
            continue  # a recogniser reading its own placeholder ("DOB [DATE_1]")
        left.append(found.category)
    return sorted(set(left))


def require_clean(text: str | None, *, what: str) -> str | None:
    """`text` unchanged when no identifier is left in it; `UncleanText` (naming the kinds) otherwise."""
    if text:
        left = identifiers_left(text)
        if left:
            raise UncleanText(
                f"{what} holds identifiers ({', '.join(left)}): de-identify it at the boundary first"
            )
    return text


def digest(text: str) -> str:
    """What an audit row keeps of a text: its digest and size, never the words."""
    return f"sha256:{hashlib.sha256(text.encode('utf-8', 'replace')).hexdigest()[:16]} chars:{len(text)}"


PersonText = Annotated[str, AfterValidator(person_text)]
