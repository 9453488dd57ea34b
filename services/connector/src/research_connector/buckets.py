"""The JetStream key-value buckets in which every connector replica keeps the state it shares
with the others: the circuit of each source (`breaker.py`) and the rate-limit timestamp of each
budget (`shared_ratelimit.py`). One value a key (no history), on disk, replicated like the
streams.
"""

from __future__ import annotations

import nats
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from research_platform.nats_seeds import stream_replicas


async def open_shared_bucket(
    nc: nats.NATS, bucket: str, description: str, replicas: int | None = None
) -> KeyValue:
    """The KV bucket `bucket`, created on first use (`replicas`: the setting
    `NATS_STREAM_REPLICAS`, else detected from the cluster)."""
    js = nc.jetstream(timeout=5)
    config = KeyValueConfig(
        bucket=bucket,
        history=1,
        storage=StorageType.FILE,
        replicas=stream_replicas(nc, replicas),
        description=description,
    )
    return await js.create_key_value(config)
