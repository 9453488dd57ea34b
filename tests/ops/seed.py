"""A small, hand-countable ledger for the dashboard tests, in a fixed week of 2030.

Fixed timestamps (not now()) keep the rows of other tests out of every time-filtered panel, and
the tests assert exact numbers a person can recount from this file. END is the dashboards'
"now"; ranges end there (24 h → from 2030-01-09, 7 d → from 2030-01-03, 6 h → from 18:00).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

END = datetime(2030, 1, 10, tzinfo=UTC)

T1, T2, T3, T4, T5, T6, T_OLD = (uuid.UUID(int=i) for i in range(1, 8))
C1, C2, C3, C4, C5, C6 = (uuid.UUID(int=100 + i) for i in range(1, 7))


def at(text: str) -> datetime:
    """'01-09 10:00' or '01-09 10:00:30' in January 2030, UTC."""
    day, clock = text.split(" ")
    fmt = "%m-%d %H:%M:%S" if clock.count(":") == 2 else "%m-%d %H:%M"
    return datetime.strptime(f"{day} {clock}", fmt).replace(year=2030, tzinfo=UTC)


TASKS = [  # id, tier, status, created
    (T1, "emergency", "claimed", "01-09 10:00"),
    (T2, "emergency", "claimed", "01-09 10:05"),
    (T3, "priority", "claimed", "01-09 10:10"),
    (T4, "priority", "failed", "01-09 11:00"),
    (T5, "batched", "queued", "01-09 12:00"),
    (T6, "batched", "researching", "01-09 12:30"),
    (T_OLD, "priority", "claimed", "01-05 09:00"),
]
CLAIMS = [  # id, task, status, created
    (C1, T1, "active", "01-09 10:00:30"),
    (C2, T2, "active", "01-09 10:05:30"),
    (C3, T3, "rejected", "01-09 10:10:30"),
    (C4, T_OLD, "superseded", "01-05 09:00:30"),
    (C5, None, "critic_quarantine", "01-09 13:00"),
    (C6, None, "pending", "01-09 14:00"),
]
VERDICTS = [  # claim, verdict, created (the first verdict of C1 is 60 s after T1; C2 120 s; C3 300 s)
    (C1, "promote", "01-09 10:01"),
    (C2, "supersede", "01-09 10:07"),
    (C3, "reject", "01-09 10:15"),
    (C1, "promote", "01-09 15:00"),  # a re-critique: not a task → verdict latency
    (C4, "promote", "01-05 09:01"),
]
AUDIT = [  # when, service, action, task, claim, subject_ids, payload
    *[
        (created, "gateway", "research.task.submitted", task, None, {}, {"tier": tier})
        for task, tier, _, created in TASKS
    ],
    (
        "01-09 11:00",
        "researcher",
        "consumer.dead_letter",
        None,
        None,
        {"subject": "research.task.priority"},
        {"reason": "invalid json"},
    ),
    (
        "01-09 11:30",
        "researcher",
        "consumer.dead_letter",
        None,
        None,
        {"subject": "research.task.priority"},
        {"reason": "invalid json"},
    ),
    (
        "01-09 12:00",
        "critic",
        "consumer.dead_letter",
        None,
        None,
        {"subject": "research.claim.pending"},
        {"reason": "unknown claim"},
    ),
    (
        "01-08 12:00",
        "critic",
        "consumer.dead_letter",
        None,
        None,
        {"subject": "research.claim.pending"},
        {"reason": "too old"},
    ),
    ("01-09 12:50", "critic", "research.critic.timeout", None, C5, {}, {"timeouts": 1}),
    ("01-09 12:55", "critic", "research.critic.timeout", None, C5, {}, {"timeouts": 2}),
    ("01-09 13:00", "critic", "research.critic.timeout", None, C5, {}, {"timeouts": 3}),
    ("01-09 13:00", "critic", "research.critic.quarantine", None, C5, {}, {"timeouts": 3}),
    (
        "01-09 10:00",
        "connector",
        "connector.degraded",
        T1,
        None,
        {"source": "pubmed"},
        {"source": "pubmed", "reason": "http_429"},
    ),
    (
        "01-09 10:30",
        "connector",
        "connector.degraded",
        T2,
        None,
        {"source": "pubmed"},
        {"source": "pubmed", "reason": "http_429"},
    ),
    (
        "01-09 11:00",
        "connector",
        "connector.degraded",
        None,
        None,
        {"source": "pubmed"},
        {"source": "pubmed", "reason": "timeout"},
    ),
    (
        "01-09 12:00",
        "connector",
        "connector.degraded",
        None,
        None,
        {"source": "crossref"},
        {"source": "crossref", "reason": "http_503"},
    ),
    (
        "01-09 12:30",
        "connector",
        "connector.degraded",
        None,
        None,
        {"source": "openalex"},
        {"source": "openalex", "reason": "deadline"},
    ),
    (
        "01-01 12:00",
        "connector",
        "connector.degraded",
        None,
        None,
        {"source": "arxiv"},
        {"source": "arxiv", "reason": "http_429"},
    ),
    (
        "01-09 13:00",
        "connector",
        "connector.phi_refused",
        None,
        None,
        {"source": "pubmed"},
        {"source": "pubmed", "kinds": ["mrn"]},
    ),
    (
        "01-05 01:00",
        "correlator",
        "research.correlator.finding",
        None,
        None,
        {},
        {"kind": "co_occurrence"},
    ),
    (
        "01-05 01:00",
        "correlator",
        "research.correlator.finding",
        None,
        None,
        {},
        {"kind": "co_occurrence"},
    ),
    ("01-06 01:00", "correlator", "research.correlator.no_pattern", None, None, {}, {}),
    ("01-06 01:00", "correlator", "research.correlator.no_pattern", None, None, {}, {}),
    ("01-06 01:00", "correlator", "research.correlator.no_pattern", None, None, {}, {}),
    (
        "01-09 09:00",
        "librarian",
        "research.librarian.finding",
        None,
        C1,
        {},
        {"kind": "broken_provenance"},
    ),
    ("01-09 09:30", "librarian", "research.librarian.resolved", None, C1, {}, {}),
    ("01-02 09:30", "replicator", "research.replicator.skipped", None, C4, {}, {}),
    (
        "01-07 09:00",
        "reviewer",
        "research.review.requested",
        None,
        None,
        {"review_id": "rev-1"},
        {},
    ),
    (
        "01-07 10:00",
        "reviewer",
        "research.review.requested",
        None,
        None,
        {"review_id": "rev-2"},
        {},
    ),
    (
        "01-07 09:10",
        "reviewer",
        "research.review.completed",
        None,
        None,
        {"review_id": "rev-1"},
        {"outcome": "PASS", "duration_s": 40},
    ),
    (
        "01-07 10:20",
        "reviewer",
        "research.review.completed",
        None,
        None,
        {"review_id": "rev-2"},
        {"outcome": "REVISION_NEEDED", "duration_s": 80},
    ),
    (
        "01-08 08:00",
        "reviewer",
        "research.review.stale",
        None,
        C1,
        {"review_id": "rev-1"},
        {"reason": "claim superseded"},
    ),
    (
        "01-08 09:00",
        "verifier",
        "research.verification.completed",
        None,
        None,
        {},
        {"verdict": "STRONGLY SUPPORTED", "duration_s": 10},
    ),
    (
        "01-08 10:00",
        "verifier",
        "research.verification.completed",
        None,
        None,
        {},
        {"verdict": "STRONGLY SUPPORTED", "duration_s": 20},
    ),
    (
        "01-08 11:00",
        "verifier",
        "research.verification.completed",
        None,
        None,
        {},
        {"verdict": "MIXED EVIDENCE", "duration_s": 30},
    ),
    (
        "01-09 07:00",
        "verifier",
        "research.verification.verdict_changed",
        None,
        C2,
        {},
        {"previous": "STRONGLY SUPPORTED", "verdict": "MIXED EVIDENCE"},
    ),
    (
        "01-08 12:00",
        "scout",
        "research.sourcelist.completed",
        None,
        None,
        {},
        {"duration_s": 5, "new_sources": 3},
    ),
    (
        "01-09 12:00",
        "scout",
        "research.sourcelist.completed",
        None,
        None,
        {},
        {"duration_s": 7, "new_sources": 0},
    ),
    # the audit explorer's last 6 h (18:00–24:00 on 01-09): three rows
    ("01-09 17:00", "researcher", "research.claim.proposed", T1, C1, {}, {}),
    (
        "01-09 20:00",
        "gateway",
        "research.admin.control",
        None,
        None,
        {"agent": "librarian"},
        {"verb": "pause"},
    ),
    ("01-09 21:00", "researcher", "research.claim.proposed", T1, C1, {}, {}),
    ("01-09 22:00", "critic", "research.claim.promoted", T1, C1, {}, {"score": 0.8}),
]
FINDINGS = [  # agent, kind, created, expires, resolved
    ("correlator", "co_occurrence", "01-09 08:00", "07-01 00:00", None),
    ("correlator", "co_occurrence", "01-05 08:00", "07-01 00:00", "01-06 00:00"),
    ("librarian", "broken_provenance", "01-09 09:00", "07-01 00:00", None),
    ("librarian", "approaching_decay", "01-04 09:00", "07-01 00:00", None),
    ("replicator", "eroded", "01-08 09:00", "01-09 12:00", None),  # expired before END
]
RUNS = [  # agent, trigger, outcome, started, seconds (None: still running), error
    ("correlator", "schedule", "completed", "01-05 00:00", 10, None),
    ("correlator", "schedule", "completed", "01-06 00:00", 20, None),
    ("correlator", "run-once", "completed", "01-07 00:00", 30, None),
    ("correlator", "schedule", "completed", "01-01 00:00", 50, None),  # outside the week
    ("replicator", "schedule", "failed", "01-08 00:00", 5, "ConnectionError: connector timed out"),
    ("librarian", "schedule", "completed", "01-09 00:00", 2, None),
    ("librarian", "schedule", "completed", "01-09 06:00", 4, None),
    (
        "librarian",
        "schedule",
        "abandoned",
        "01-09 12:00",
        1,
        "its process stopped without finishing it",
    ),
    ("librarian", "schedule", "running", "01-09 23:00", None, None),
]
CACHE = [  # source, expires
    ("pubmed", "01-10 12:00"),
    ("pubmed", "01-10 13:00"),
    ("pubmed", "01-10 14:00"),
    ("pubmed", "01-09 06:00"),
    ("crossref", "01-10 12:00"),
]


async def seed(conn) -> None:  # asyncpg.Connection (as a superuser: the reader cannot write)
    """Insert the rows above into a freshly migrated database."""
    from datetime import timedelta

    await conn.executemany(
        "INSERT INTO research_tasks (id, question, tier, status, origin, request, created_at, updated_at)"
        " VALUES ($1, 'q', $2, $3, 'test', '{}', $4, $4)",
        [(t, tier, status, at(created)) for t, tier, status, created in TASKS],
    )
    await conn.executemany(
        "INSERT INTO memory_claims (id, task_id, entity, question, statement, status, confidence, supports,"
        " supersedes, model, dropped_supports, critic_timeouts, created_at, updated_at)"
        " VALUES ($1, $2, 'e', 'q', 's', $3, 0.7, '[]', '{}', 'offline', 0, 0, $4, $4)",
        [(c, t, status, at(created)) for c, t, status, created in CLAIMS],
    )
    await conn.executemany(
        "INSERT INTO critic_verdicts (claim_id, verdict, score, reasoning, supersedes, model, created_at)"
        " VALUES ($1, $2, 0.8, 'r', '{}', 'offline', $3)",
        [(c, verdict, at(created)) for c, verdict, created in VERDICTS],
    )
    await conn.executemany(
        "INSERT INTO audit_events (occurred_at, service, action, task_id, claim_id, subject_ids, payload)"
        " VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)",
        [(at(w), s, a, t, c, json.dumps(sub), json.dumps(p)) for w, s, a, t, c, sub, p in AUDIT],
    )
    await conn.executemany(
        "INSERT INTO findings (id, agent, kind, claim_ids, payload, created_at, expires_at, resolved_at)"
        " VALUES (gen_random_uuid(), $1, $2, '{}', '{}', $3, $4, $5)",
        [(a, k, at(c), at(e), at(r) if r else None) for a, k, c, e, r in FINDINGS],
    )
    await conn.executemany(
        "INSERT INTO agent_runs (id, agent, trigger, started_at, finished_at, outcome, counts, error)"
        " VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, '{}', $6)",
        [
            (a, trig, at(s), None if secs is None else at(s) + timedelta(seconds=secs), out, err)
            for a, trig, out, s, secs, err in RUNS
        ],
    )
    await conn.executemany(
        "INSERT INTO connector_cache (key, source, request, hits, created_at, expires_at)"
        " VALUES ($1, $2, '{}', '[]', $3, $3)",
        [(f"k{i}", src, at(e)) for i, (src, e) in enumerate(CACHE)],
    )
