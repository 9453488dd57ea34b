"""A judge with fixed probabilities, for the rules built on the trained judgement: each test states
what the models say about each text, so it pins the rule, not the weights (which are retrained)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

NEI = (0.05, 0.05, 0.9)


class FixedJudge:
    """`stances[sentence]` = (P(SUPPORT), P(CONTRADICT), P(NEI)); `relevances[title]` = P(on topic).
    Unknown sentences are NEI, unknown papers off topic. Every call is recorded."""

    def __init__(
        self,
        stances: Mapping[str, Sequence[float]] | None = None,
        relevances: Mapping[str, float] | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.stances = dict(stances or {})
        self.relevances = dict(relevances or {})
        self.config = config or {
            "pair": {"thresholds": {"rationale": 0.5, "top_k": 2, "contradict_weight": 1.0}},
            "relevance": {"threshold": 0.5},
        }
        self.calls: list[tuple[str, str, list[Any]]] = []

    @property
    def thresholds(self) -> dict[str, float]:
        return dict(self.config["pair"]["thresholds"])

    def stance(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        self.calls.append(("stance", claim, list(sentences)))
        return np.array([self.stances.get(s, NEI) for s in sentences], dtype=np.float32).reshape(
            -1, 3
        )

    def evidence(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        return 1.0 - self.stance(claim, sentences, titles)[:, 2]

    def relevance(self, question: str, passages: Sequence[str | tuple[str, str]]) -> np.ndarray:
        self.calls.append(("relevance", question, list(passages)))
        titles = [p[0] if isinstance(p, tuple) else p for p in passages]
        return np.array([self.relevances.get(t, 0.1) for t in titles], dtype=np.float32)
