"""Expand the Grafana PostgreSQL macros and template variables of a panel's SQL, as Grafana does.

The dashboards' SQL is only SQL once Grafana has rewritten it: `$__timeFilter(col)` becomes
a BETWEEN on the dashboard's time range, `$__timeGroupAlias(col, $__interval)` a bucketed
epoch named "time", `${action}` the quoted values of a variable. The tests and
`bench/dashboards.py` expand each panel with this module and run the result as the
read-only Grafana role, so a panel that would error in Grafana errors here first.

Covered (grafana-postgresql-datasource, Grafana 10/11): `$__timeFilter`, `$__timeFrom`,
`$__timeTo`, `$__timeGroup`, `$__timeGroupAlias`, `$__time`, `$__timeEpoch`,
`$__unixEpochFilter`, `$__interval`, `$__interval_ms`, and variables `$name`, `${name}`,
`${name:sqlstring|csv|raw|singlequote}` (multi-value and "All" quoted and comma-joined, as the
SQL data sources do). Anything else that starts with `$__` raises, so an unknown macro fails loudly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
MACRO = re.compile(r"\$__(\w+)\(")
VARIABLE = re.compile(r"\$\{(\w+)(?::(\w+))?\}|\$(\w+)")
RELATIVE = re.compile(r"^now(?:-(\d+)([smhdwy]))?$")


def seconds(interval: str) -> float:
    """'5m' → 300.0; also accepts quoted forms ('5m', "5m") as macro arguments carry them."""
    match = re.fullmatch(r"\s*['\"]?(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)['\"]?\s*", interval)
    if match is None:
        raise ValueError(f"not a Grafana interval: {interval!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def relative_start(expression: str, now: datetime) -> datetime:
    """A dashboard's `time.from` such as 'now-24h' resolved against `now`."""
    match = RELATIVE.match(expression)
    if match is None:
        raise ValueError(f"unsupported relative time {expression!r}")
    if match.group(1) is None:
        return now
    return now - timedelta(seconds=seconds(match.group(1) + match.group(2)))


@dataclass
class TimeRange:
    """The dashboard's time range and the interval Grafana would choose for its panels."""

    start: datetime
    end: datetime
    interval: str = "1h"
    variables: dict[str, list[str]] = field(default_factory=dict)

    def literal(self, moment: datetime) -> str:
        return "'" + moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") + "'"


def _split_args(text: str, open_at: int) -> tuple[list[str], int]:
    """Arguments of the call whose '(' is at `open_at`, split on top-level commas; and its end."""
    depth, i = 0, open_at + 1
    args: list[str] = []
    current: list[str] = []
    while i < len(text):
        char = text[i]
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                args.append("".join(current).strip())
                return [a for a in args if a != ""], i + 1
            depth -= 1
        elif char == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    raise ValueError("unbalanced parentheses in a macro call")


def _bucket(column: str, interval: str) -> str:
    step = int(seconds(interval))
    return f"floor(extract(epoch from {column})/{step})*{step}"


def _macro(name: str, args: list[str], span: TimeRange) -> str:
    start, end = span.literal(span.start), span.literal(span.end)
    if name == "timeFilter":
        return f"{args[0]} BETWEEN {start} AND {end}"
    if name == "timeFrom":
        return start
    if name == "timeTo":
        return end
    if name == "timeGroup":
        return _bucket(args[0], args[1])
    if name == "timeGroupAlias":
        return _bucket(args[0], args[1]) + ' AS "time"'
    if name == "time":
        return f'{args[0]} AS "time"'
    if name == "timeEpoch":
        return f'extract(epoch from {args[0]}) AS "time"'
    if name == "unixEpochFilter":
        return f"{args[0]} >= {int(span.start.timestamp())} AND {args[0]} <= {int(span.end.timestamp())}"
    raise ValueError(f"unknown Grafana macro $__{name}")


def _format(values: list[str], style: str | None, multi: bool) -> str:
    quoted = ",".join("'" + v.replace("'", "''") + "'" for v in values)
    if style in ("sqlstring", "singlequote"):
        return quoted
    if style == "csv":
        return ",".join(values)
    if style == "raw" or not multi:
        return ",".join(values)
    return quoted


def expand(sql: str, span: TimeRange, multi: set[str] | frozenset[str] = frozenset()) -> str:
    """`sql` with variables, then macros, replaced. `multi` names the multi-value/All variables."""
    builtins = {
        "__interval": span.interval,
        "__interval_ms": str(int(seconds(span.interval) * 1000)),
    }

    def variable(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name in builtins:
            return builtins[name]
        if name.startswith("__"):
            return match.group(0)  # a macro call, handled below
        if name not in span.variables:
            raise ValueError(f"panel uses undefined variable ${name}")
        return _format(span.variables[name], match.group(2), name in multi)

    sql = VARIABLE.sub(variable, sql)
    out, pos = [], 0
    for match in MACRO.finditer(sql):
        if match.start() < pos:
            continue
        args, end = _split_args(sql, match.end() - 1)
        out.append(sql[pos : match.start()])
        out.append(_macro(match.group(1), args, span))
        pos = end
    out.append(sql[pos:])
    expanded = "".join(out)
    if "$__" in expanded:
        raise ValueError(f"unexpanded macro left in: {expanded}")
    return expanded
