"""The process embedder's worker: callers that queue while the model works share one batch, every
caller gets its own rows, and a text is embedded once while it stays in the cache."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from research_corpus.embedding import Embedder
from research_corpus.embedding.batching import MicroBatchingEmbedder

pytestmark = pytest.mark.unit


class FakeModel:
    """Stands in for `Embedder.embed`: a vector per text from its hash, every call recorded; the
    first call can be held until the test lets it go (the model "busy")."""

    def __init__(self, hold_first: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.started = threading.Event()
        if not hold_first:
            self.release.set()

    @staticmethod
    def vector(text: str) -> np.ndarray:
        row = np.random.default_rng(abs(hash(text)) % 2**32).normal(size=384).astype(np.float32)
        return row / np.linalg.norm(row)

    def __call__(self, _embedder: Embedder, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.started.set()
        assert self.release.wait(10), "the test never released the model"
        return np.stack([self.vector(t) for t in texts])


def patch_model(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> None:
    monkeypatch.setattr(Embedder, "embed", lambda self, texts: model(self, texts))  # noqa: PLW0108 - a function binds `self`, the callable instance would not


def test_callers_queued_while_the_model_works_share_one_batch(monkeypatch):
    model = FakeModel(hold_first=True)
    patch_model(monkeypatch, model)
    embedder = MicroBatchingEmbedder(window_s=0.0)
    first = embedder.submit(["first"])
    assert model.started.wait(10)  # the worker holds "first" in the model
    later = [embedder.submit([f"text {i}", "shared"]) for i in range(10)]
    model.release.set()

    assert np.allclose(first.result(10)[0], FakeModel.vector("first"))
    for i, future in enumerate(later):
        rows = future.result(10)
        assert np.allclose(rows[0], FakeModel.vector(f"text {i}")) and np.allclose(
            rows[1], FakeModel.vector("shared")
        )
    assert model.calls[0] == ["first"]
    assert len(model.calls) == 2 and sorted(model.calls[1]) == sorted(
        [f"text {i}" for i in range(10)] + ["shared"]
    )
    assert embedder.batches == 2 and embedder.embedded == 12  # "shared" reached the model once


def test_vectors_come_from_the_cache_the_second_time(monkeypatch):
    model = FakeModel()
    patch_model(monkeypatch, model)
    embedder = MicroBatchingEmbedder(cache_size=2)
    embedder.embed(["a", "b"])
    embedder.embed(["a", "b"])
    assert model.calls == [["a", "b"]]
    embedder.embed(["c"])  # evicts "a", the least recently used
    embedder.embed(["a"])
    assert model.calls[-1] == ["a"]


def test_forget_empties_the_cache(monkeypatch):
    model = FakeModel()
    patch_model(monkeypatch, model)
    embedder = MicroBatchingEmbedder()
    embedder.embed(["a"])
    embedder.forget()
    embedder.embed(["a"])
    assert model.calls == [["a"], ["a"]]
