"""Schemathesis hooks (`SCHEMATHESIS_HOOKS=tests.security.fuzz_hooks`): the one rule of the API that
JSON Schema cannot state, so the fuzzer's schema-valid requests are the valid ones.

`POST /source-lists` refuses a `date_to` before `date_from` with a 422 (the field's description in
the OpenAPI document says so); JSON Schema has no way to compare two fields. Positive cases with
the dates reversed are not generated; negative cases are left alone (any refusal is right for them).
"""

from __future__ import annotations

from typing import Any

import schemathesis


@schemathesis.hook
def filter_case(context: Any, case: Any) -> bool:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    if (
        case.method.upper() != "POST"
        or not case.operation.path.endswith("/source-lists")
        or not isinstance(case.body, dict)
    ):
        return True
    date_from, date_to = case.body.get("date_from"), case.body.get("date_to")
    return not (isinstance(date_from, str) and isinstance(date_to, str) and date_to < date_from)
