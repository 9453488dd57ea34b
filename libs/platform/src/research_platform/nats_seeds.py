"""Seed URLs and stream replication: what a process needs to live on a NATS JetStream cluster.

`NATS_URL` may name one server or several, comma-separated
(`nats://10.0.0.1:4222,nats://10.0.0.2:4222`). Every client is given the whole list, so a
process starts even while one seed is down and reconnects to another member when its server
dies (the servers also gossip the rest of the cluster to it).

Streams are replicated when the engine runs on a cluster: `NATS_STREAM_REPLICAS` sets the
replica count; unset, it is 3 when the server says it belongs to a cluster and 1 otherwise, so
the single embedded server and a 3-node cluster both work without configuration.
"""

from __future__ import annotations

import dataclasses

import nats
from nats.js.api import StreamConfig

CLUSTER_REPLICAS = 3


def seed_urls(url: str) -> list[str]:
    """The servers named by a `NATS_URL` value: one URL or several, comma-separated."""
    seeds = [part.strip() for part in url.split(",") if part.strip()]
    if not seeds:
        raise ValueError("NATS_URL names no server")
    return seeds


def detected_replicas(nc: nats.NATS) -> int:
    """3 when the connected server reports a cluster (it names one in its INFO), else 1."""
    info = getattr(nc, "_server_info", None) or {}
    return CLUSTER_REPLICAS if info.get("cluster") else 1


def stream_replicas(nc: nats.NATS, configured: int | None) -> int:
    """The replica count for the engine's streams on this connection: `configured` (the setting
    `NATS_STREAM_REPLICAS`) when set, else detected from the server."""
    return configured if configured is not None else detected_replicas(nc)


def replicated(config: StreamConfig, replicas: int) -> StreamConfig:
    """`config` with `num_replicas` set (the declared configs stay replica-agnostic)."""
    return dataclasses.replace(config, num_replicas=replicas)


async def connect(url: str, **options: object) -> nats.NATS:
    """`nats.connect` with every seed of `url`; reconnects forever unless told otherwise."""
    options.setdefault("max_reconnect_attempts", -1)
    options.setdefault("reconnect_time_wait", 0.5)
    options.setdefault("connect_timeout", 5)
    return await nats.connect(servers=seed_urls(url), **options)
