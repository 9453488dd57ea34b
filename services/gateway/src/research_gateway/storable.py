"""Text the ledger can hold: refused at the edge (422) when Postgres or JSON could not store it.

Postgres `text` refuses NUL, `jsonb` refuses `\\u0000`, and a lone UTF-16 surrogate (a broken
client, `"\\ud800"` in JSON) cannot be encoded as UTF-8 at all — any of them reaching a write
would be a 500 instead of a clear 422. Other C0/C1 control characters (except tab, newline and
carriage return) are refused with them: no question, filter or name legitimately holds one,
and they are how log and terminal injection travels.

Every free-text field of a request model and every free-text query parameter uses these types,
so the rule is written once and documented in the OpenAPI schema as a `pattern` (written with
`\\x` escapes, which JSON-schema tools and fuzzers can use; a lone surrogate cannot be sent in
valid UTF-8 anyway and is refused by the validator all the same):

    question: SafeText = Field(min_length=3, max_length=2000)
    q: Annotated[str, TEXT_QUERY, Query(min_length=1, max_length=1000, json_schema_extra=STORABLE)]
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field

UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# The same class (less the surrogates) as an ECMA-262 / Python pattern for the OpenAPI document.
UNSTORABLE_RANGE = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
STORABLE_PATTERN = rf"^[^{UNSTORABLE_RANGE}]*$"
# Source and source-type names: lowercase slugs (`corpus`, `pubmed`, `review`).
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,49}$"


def storable_text(value: str) -> str:
    """`value` unchanged, or ValueError (→ 422) naming what cannot be stored."""
    found = UNSTORABLE.search(value)
    if found is not None:
        char = found.group()
        kind = (
            "NUL"
            if char == "\x00"
            else "a lone surrogate"
            if "\ud800" <= char <= "\udfff"
            else "a control character"
        )
        raise ValueError(
            f"the text holds {kind} (U+{ord(char):04X}) at position {found.start()}, which cannot be stored"
        )
    return value


SafeText = Annotated[
    str,
    AfterValidator(storable_text),
    Field(json_schema_extra={"pattern": STORABLE_PATTERN}),
]
Slug = Annotated[str, Field(pattern=SLUG_PATTERN, max_length=50)]
# For a free-text query parameter: `Annotated[str, TEXT_QUERY, Query(max_length=…, json_schema_extra=STORABLE)]`.
TEXT_QUERY = AfterValidator(storable_text)
STORABLE: dict[str, Any] = {"pattern": STORABLE_PATTERN}
