"""The abstract-level evidence model: a claim and a whole abstract in; SUPPORT / CONTRADICT / NEI
for the abstract and a rationale score for each of its sentences out (MultiVerS's recipe, on the
packaged all-MiniLM-L6-v2).

One sequence holds `[CLS] claim [SEP] title [SEP] s1 [SEP] s2 [SEP] …` (the claim as segment 0,
the paper as segment 1, as the pair model read them). Each sentence is the mean of its tokens'
last hidden states — read *in the context of the whole abstract and the claim* —, a linear head
scores it as a rationale, and the abstract's label comes from the pair head applied to the
sentences pooled by their rationale weights (softmax over the rationale logits): the label is the
stance of the sentences that are its evidence, so an abstract without one reads NEI.

An abstract longer than `max_length` tokens (about 9 % of SciFact's claim + abstract pairs) is
split into windows, each with the claim and the title and as many whole sentences as fit (a
sentence longer than `SENTENCE_TOKENS` is cut); its label is the window that holds the strongest
evidence (lowest P(NEI)), each sentence's score comes from its own window.

    windows(tokenizer, claim, title, sentences) -> list[Window]
    AbstractModel(encoder, hidden)                   the torch module (training and inference)
    AbstractJudge.load(folder).judge(claim, papers)  -> list[AbstractJudgement]  (calibrated)
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

from research_judgement.configured import judgement_settings, on_reconfigure
from research_judgement.metrics import sigmoid, softmax
from research_judgement.scifact import LABELS

CLAIM_TOKENS, TITLE_TOKENS, SENTENCE_TOKENS = 64, 48, 120
FULL_WEIGHTS = "encoder.fp16.safetensors"
MAX_LENGTH = 512


@dataclass(frozen=True, slots=True)
class Window:
    """One model input: token ids, segment ids, and which tokens belong to which sentence."""

    input_ids: list[int]
    token_type_ids: list[int]
    sentence_of_token: list[
        int
    ]  # the sentence index of each token (position within `sentences`), -1 elsewhere
    sentences: tuple[int, ...]  # the abstract's sentence indices this window holds, in order


def windows(
    tokenizer: Any, claim: str, title: str, sentences: Sequence[str], max_length: int = MAX_LENGTH
) -> list[Window]:
    """The abstract packed into as few windows of at most `max_length` tokens as its sentences allow."""
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    claim_ids = tokenizer(claim, add_special_tokens=False)["input_ids"][:CLAIM_TOKENS]
    title_ids = tokenizer(title or "", add_special_tokens=False)["input_ids"][:TITLE_TOKENS]
    encoded = tokenizer(list(sentences), add_special_tokens=False)["input_ids"] if sentences else []
    head_ids = [cls, *claim_ids, sep]
    paper_head = [*title_ids, sep] if title_ids else []
    out: list[Window] = []
    current: list[tuple[int, list[int]]] = []

    def flush() -> None:
        ids, types, owner = list(head_ids), [0] * len(head_ids), [-1] * len(head_ids)
        ids += paper_head
        types += [1] * len(paper_head)
        owner += [-1] * len(paper_head)
        for index, sentence_ids in current:
            ids += [*sentence_ids, sep]
            types += [1] * (len(sentence_ids) + 1)
            owner += [index] * len(sentence_ids) + [-1]
        out.append(Window(ids, types, owner, tuple(i for i, _ in current)))

    fixed = len(head_ids) + len(paper_head)
    used = fixed
    for index, sentence_encoded in enumerate(encoded):
        ids = sentence_encoded[:SENTENCE_TOKENS] or [tokenizer.unk_token_id]
        if current and used + len(ids) + 1 > max_length:
            flush()
            current, used = [], fixed
        current.append((index, ids))
        used += len(ids) + 1
    if current or not out:
        flush()
    return out


def collate(
    batch: Sequence[Window],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded tensors of a batch of windows: ids, types, mask, and the (B, S, T) sentence pooling matrix."""
    import torch

    length = max(len(w.input_ids) for w in batch)
    sentences = max(max(len(w.sentences), 1) for w in batch)
    ids = torch.zeros((len(batch), length), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    pool = torch.zeros((len(batch), sentences, length), dtype=torch.float32)
    present = torch.zeros((len(batch), sentences), dtype=torch.bool)
    for b, w in enumerate(batch):
        n = len(w.input_ids)
        ids[b, :n] = torch.tensor(w.input_ids)
        types[b, :n] = torch.tensor(w.token_type_ids)
        mask[b, :n] = 1
        slot = {index: s for s, index in enumerate(w.sentences)}
        for t, owner in enumerate(w.sentence_of_token):
            if owner >= 0:
                pool[b, slot[owner], t] = 1.0
        present[b, : len(w.sentences)] = True
    pool = pool / pool.sum(-1, keepdim=True).clamp(min=1.0)
    return ids, types, mask, pool, present


def _module() -> Callable[..., torch.nn.Module]:
    import torch

    class AbstractModel(torch.nn.Module):
        """encoder → sentence vectors (mean of their tokens) → rationale logits; pair head over the
        sentences pooled by their rationale weights → label logits (SUPPORT, CONTRADICT, NEI)."""

        def __init__(self, encoder: Any, hidden: int = 384) -> None:
            super().__init__()
            self.encoder = encoder
            self.rationale = torch.nn.Linear(hidden, 1)
            self.label = torch.nn.Linear(hidden, len(LABELS))

        def forward(
            self,
            ids: torch.Tensor,
            types: torch.Tensor,
            mask: torch.Tensor,
            pool: torch.Tensor,
            present: torch.Tensor,
        ) -> tuple[torch.Tensor, torch.Tensor]:
            hidden = self.encoder(
                input_ids=ids, token_type_ids=types, attention_mask=mask
            ).last_hidden_state
            sentence = torch.bmm(pool.to(hidden.dtype), hidden)  # (B, S, H)
            rationale = self.rationale(sentence).squeeze(-1)  # (B, S)
            weights = torch.softmax(rationale.masked_fill(~present, -1e4), dim=-1)
            pooled = torch.bmm(weights.unsqueeze(1), sentence).squeeze(1)  # (B, H)
            return self.label(pooled), rationale

    return AbstractModel


def build_model(encoder: Any, hidden: int = 384) -> torch.nn.Module:
    return _module()(encoder, hidden)


@dataclass(frozen=True, slots=True)
class AbstractJudgement:
    """One abstract against one claim: calibrated P(SUPPORT, CONTRADICT, NEI) and each sentence's
    P(rationale), in the abstract's sentence order."""

    probs: np.ndarray
    rationale: np.ndarray

    @property
    def label(self) -> str:
        return LABELS[int(np.argmax(self.probs))]

    @property
    def evidence(self) -> float:
        """P(the abstract holds evidence on the claim either way) = 1 − P(NEI)."""
        return float(1.0 - self.probs[2])

    def best_sentences(self, k: int = 3, floor: float = 0.0) -> list[int]:
        order = np.argsort(-self.rationale, kind="stable")[:k]
        return [int(i) for i in order if self.rationale[i] >= floor]


class AbstractJudge:
    """The shipped abstract model (LoRA adapter merged into the packaged MiniLM + heads), thread-safe."""

    def __init__(
        self, tokenizer: Any, model: torch.nn.Module, config: dict[str, Any], digest: str = ""
    ) -> None:
        self.tokenizer, self.model, self.config = tokenizer, model, config
        self.digest = digest  # of the weight files (`weights_digest`)
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        """Which judge decides: the weights' digest and the rule set's (`thresholds`), e.g.
        `abstract-1a2b3c4d5e6f/rules-0a1b2c3d`. A verdict records it, so a re-verification by another
        judge is told apart from one whose evidence changed."""
        return judge_version(self.digest, self.thresholds)

    @property
    def thresholds(self) -> dict[str, float]:
        return dict(self.config.get("thresholds", {}))

    @classmethod
    def load(cls, folder: str | Path) -> AbstractJudge:
        import torch
        from safetensors.torch import load_file

        from research_judgement.scorer import load_base, merged_adapter

        folder = Path(folder)
        tokenizer, encoder = load_base()
        if (folder / FULL_WEIGHTS).exists():  # a full fine-tune ships its whole encoder (fp16)
            state = load_file(str(folder / FULL_WEIGHTS))
            encoder.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
            encoder = encoder.float().eval()
        else:  # a LoRA adapter on the packaged MiniLM, merged
            encoder = merged_adapter(encoder, folder)
        model: Any = build_model(encoder)  # an AbstractModel: its class is made once torch loads
        heads = load_file(str(folder / "heads.safetensors"))
        model.rationale.load_state_dict(
            {
                k.removeprefix("rationale."): v.float()
                for k, v in heads.items()
                if k.startswith("rationale.")
            }
        )
        model.label.load_state_dict(
            {
                k.removeprefix("label."): v.float()
                for k, v in heads.items()
                if k.startswith("label.")
            }
        )
        model.eval()
        torch.set_grad_enabled(False)
        config = json.loads((folder / "abstract.json").read_text(encoding="utf-8"))
        return cls(tokenizer, model, config, weights_digest(folder))

    def raw(
        self, claim: str, papers: Sequence[tuple[str, Sequence[str]]], batch_size: int = 8
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Uncalibrated (label logits, rationale logits) per paper ((title, sentences))."""
        import torch

        jobs = [
            (p, w)
            for p, (title, sentences) in enumerate(papers)
            for w in windows(self.tokenizer, claim, title, sentences)
        ]
        label = [np.full(len(LABELS), -np.inf, dtype=np.float32) for _ in papers]
        best_nei = [np.inf for _ in papers]
        rationale = [np.full(len(sentences), -20.0, dtype=np.float32) for _, sentences in papers]
        order = sorted(range(len(jobs)), key=lambda i: len(jobs[i][1].input_ids))
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chunk = [jobs[i] for i in order[start : start + batch_size]]
                logits, scores = self.model(*collate([w for _, w in chunk]))
                for (p, w), row, sentence_scores in zip(
                    chunk, logits.float().numpy(), scores.float().numpy(), strict=True
                ):
                    nei = float(softmax(row[None, :])[0, 2])
                    if nei < best_nei[p]:
                        best_nei[p], label[p] = nei, row
                    for slot, index in enumerate(w.sentences):
                        rationale[p][index] = sentence_scores[slot]
        return list(zip(label, rationale, strict=True))

    def judge(
        self, claim: str, papers: Sequence[tuple[str, Sequence[str]]]
    ) -> list[AbstractJudgement]:
        """Calibrated judgements of each paper ((title, sentences)) against `claim`."""
        temperature = float(self.config.get("temperature", 1.0))
        return [
            AbstractJudgement(softmax(label[None, :], temperature)[0], sigmoid(rationale))
            for label, rationale in self.raw(claim, papers)
        ]


WEIGHTS = Path(__file__).parent / "weights" / "abstract"


def weights_digest(folder: str | Path) -> str:
    """SHA-256 (first 12 hex digits) over the model files of `folder`, names and bytes, in name order."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("*.safetensors")):
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:12]


def judge_version(digest: str, thresholds: dict[str, Any]) -> str:
    rules = hashlib.sha256(json.dumps(thresholds, sort_keys=True).encode()).hexdigest()[:8]
    return f"abstract-{digest or 'unknown'}/rules-{rules}"


def available(folder: str | Path | None = None) -> bool:
    folder = Path(folder or judgement_settings().abstract_weights or WEIGHTS)
    return (folder / "heads.safetensors").exists()


_judge: AbstractJudge | None = None
_judge_lock = threading.Lock()


def _forget() -> None:
    global _judge  # noqa: PLW0603 - the process-wide model, dropped when the settings change
    with _judge_lock:
        _judge = None


on_reconfigure(_forget)


def get_abstract_judge() -> AbstractJudge:
    """The process-wide abstract model (loads on first use), from `JUDGEMENT_ABSTRACT_WEIGHTS` of
    the section the entry point configured (`configure_judgement`)."""
    global _judge  # noqa: PLW0603 - the process-wide model, loaded once under the lock
    with _judge_lock:
        if _judge is None:
            _judge = AbstractJudge.load(judgement_settings().abstract_weights or WEIGHTS)
        return _judge
