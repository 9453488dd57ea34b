"""The ONNX Runtime cross-encoder gives the torch cross-encoder's probabilities (within 1e-3).

A LoRA adapter with non-zero (seeded random) weights and a 3-way head stand in for a trained
model, so the test checks what the export must preserve — the adapter merged into the base, the
pair's token types, truncation and mean pooling — whether or not trained weights are shipped; the
shipped stance model is compared too when it is present. Exports go to the machine's cache (the
seeded adapter's bytes are the same each run, so it is exported once per machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from research_judgement.metrics import softmax
from research_judgement.scorer import LORA_TARGETS, CrossEncoder, base_model_path

pytestmark = pytest.mark.unit

MAX_LENGTH = 128


def scifact_pairs(shared_dir: Path, count: int) -> list[tuple[str, str]]:
    """(claim, sentence) pairs: SciFact train claims against sentences of their cited abstracts."""
    abstracts = {}
    with (shared_dir / "data/scifact/corpus.jsonl").open() as corpus:
        for line in corpus:
            paper = json.loads(line)
            abstracts[paper["doc_id"]] = paper["abstract"]
    pairs = []
    with (shared_dir / "data/scifact/claims_train.jsonl").open() as claims:
        for line in claims:
            claim = json.loads(line)
            for doc in claim.get("cited_doc_ids", [])[:1]:
                pairs += [(claim["claim"], sentence) for sentence in abstracts.get(doc, [])[:3]]
            if len(pairs) >= count:
                return pairs[:count]
    return pairs


@pytest.fixture(scope="module")
def adapter_folder(tmp_path_factory) -> Path:
    """A LoRA adapter (seeded random A and B, so the merge changes the encoder) and a 3-way head."""
    import torch
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import save_file
    from transformers import AutoModel

    folder = tmp_path_factory.mktemp("judgement") / "pair"
    base = AutoModel.from_pretrained(str(base_model_path()))
    torch.manual_seed(
        30
    )  # after the load: the same adapter bytes every run, so one cached export per machine
    model = get_peft_model(
        base, LoraConfig(r=4, lora_alpha=8, target_modules=LORA_TARGETS, init_lora_weights=False)
    )
    model.save_pretrained(str(folder))
    # peft writes target_modules from a set, in an order that changes with the process's hash seed.
    config = json.loads((folder / "adapter_config.json").read_text())
    config["target_modules"] = sorted(config["target_modules"])
    (folder / "adapter_config.json").write_text(json.dumps(config, sort_keys=True))
    head = torch.nn.Linear(384, 3)
    save_file(
        {k: v.contiguous() for k, v in head.state_dict().items()}, str(folder / "head.safetensors")
    )
    return folder


def assert_same_probabilities(folder: Path, pairs: list[tuple[str, str]]) -> None:
    from research_judgement.onnx_scorer import OnnxCrossEncoder

    reference = CrossEncoder.load(folder, MAX_LENGTH).logits(pairs)
    got = OnnxCrossEncoder.load(folder, MAX_LENGTH).logits(pairs)
    assert got.shape == reference.shape == (len(pairs), 3)
    gap = np.abs(softmax(got, 1.0) - softmax(reference, 1.0)).max()
    assert gap <= 1e-3, f"largest probability gap {gap:.2e}"
    assert np.abs(got - reference).max() <= 1e-3


def test_onnx_probabilities_match_torch_with_a_merged_adapter(shared_dir, adapter_folder):
    # one pair truncated at MAX_LENGTH
    pairs = [*scifact_pairs(shared_dir, 100), ("short claim", "x " * 300)]
    assert_same_probabilities(adapter_folder, pairs)


def test_onnx_probabilities_match_torch_for_the_shipped_stance_model(shared_dir):
    from research_judgement.judge import WEIGHTS

    if not (WEIGHTS / "pair" / "head.safetensors").exists():
        pytest.skip("no shipped stance model in research_judgement/weights/pair")
    assert_same_probabilities(WEIGHTS / "pair", scifact_pairs(shared_dir, 100))


def test_the_export_is_keyed_by_the_adapter(adapter_folder, tmp_path):
    from research_corpus.onnx_export import weights_digest
    from research_judgement.onnx_scorer import MODEL_FILES

    base = base_model_path()
    files = [adapter_folder / name for name in MODEL_FILES]
    assert all(f.exists() for f in files)
    changed = tmp_path / "head.safetensors"
    changed.write_bytes(files[2].read_bytes() + b" ")
    assert (
        weights_digest(base, files)
        != weights_digest(base, [*files[:2], changed])
        != weights_digest(base)
    )
