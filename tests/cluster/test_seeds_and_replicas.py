"""`NATS_URL` with several seeds, and the engine's streams replicated on a cluster."""

from __future__ import annotations

import pytest

from research_contracts import subjects
from research_platform.broker import STREAMS, ensure_streams_at, make_broker
from research_platform.embedded import free_port
from research_platform.embedded_cluster import EmbeddedNatsCluster
from research_platform.nats_seeds import connect, seed_urls
from research_platform.settings import Settings

pytestmark = pytest.mark.integration


def test_seed_urls_split_a_comma_separated_nats_url() -> None:
    assert seed_urls("nats://a:1, nats://b:2,,nats://c:3") == [
        "nats://a:1",
        "nats://b:2",
        "nats://c:3",
    ]
    assert seed_urls("nats://only:4222") == ["nats://only:4222"]
    with pytest.raises(ValueError, match="names no server"):
        seed_urls(" , ")


async def test_streams_are_r3_on_a_cluster_and_a_dead_first_seed_is_skipped(
    healthy_cluster: EmbeddedNatsCluster,
) -> None:
    dead_seed = f"nats://127.0.0.1:{free_port()}"
    url = f"{dead_seed},{healthy_cluster.url}"
    await ensure_streams_at(url, Settings())  # replicas detected: the server names its cluster
    nc = await connect(url)
    try:
        js = nc.jetstream()
        for declared in STREAMS:
            assert declared.name is not None
            info = await js.stream_info(declared.name)
            assert info.config.num_replicas == 3
            assert info.cluster is not None and info.cluster.leader
            assert len(info.cluster.replicas or []) == 2
    finally:
        await nc.close()


async def test_a_broker_built_from_several_seeds_publishes_to_the_cluster(
    healthy_cluster: EmbeddedNatsCluster,
) -> None:
    await ensure_streams_at(healthy_cluster.url, Settings())
    broker = make_broker(f"nats://127.0.0.1:{free_port()},{healthy_cluster.url}", "test-seeds")
    await broker.connect()
    try:
        nc = await connect(healthy_cluster.url)
        before = (await nc.jetstream().stream_info(subjects.DEAD_LETTER_STREAM)).state.messages
        await broker.publish(
            b"x", subjects.dead_letter_subject("test.seeds"), stream=subjects.DEAD_LETTER_STREAM
        )
        after = (await nc.jetstream().stream_info(subjects.DEAD_LETTER_STREAM)).state.messages
        await nc.close()
        assert after == before + 1
    finally:
        await broker.stop()
