"""From sentence predictions to one label per abstract, as the SciFact task defines it.

An abstract SUPPORTS or CONTRADICTS a claim when some of its sentences are rationales for it;
otherwise it is NOT ENOUGH INFO. The rule (constants tuned by 5-fold cross-validation on
SciFact train and shipped with the weights, never tuned on dev):

1. a sentence is a rationale when its relevance `1 - P(NEI)` is at least `rationale`;
   only the `top_k` most relevant sentences are considered;
2. no rationale → NEI, strength = the best sentence's P(NEI);
3. otherwise SUPPORT vs CONTRADICT by the summed probabilities over the rationales, with
   CONTRADICT's sum multiplied by `contradict_weight` (contradictions are rarer in training,
   so the network under-predicts them); strength = the winning label's best probability.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_THRESHOLDS = {"rationale": 0.5, "top_k": 3.0, "contradict_weight": 1.0}


@dataclass(frozen=True, slots=True)
class AbstractLabel:
    label: str  # SUPPORT | CONTRADICT | NEI
    strength: float
    rationale_indices: tuple[int, ...]


def abstract_label(probs: np.ndarray, thresholds: dict[str, float] | None = None) -> AbstractLabel:
    """Label an abstract from its sentences' (n, 3) probabilities in (SUPPORT, CONTRADICT, NEI) order."""
    t = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    if len(probs) == 0:
        return AbstractLabel("NEI", 1.0, ())
    relevance = 1.0 - probs[:, 2]
    order = np.argsort(-relevance, kind="stable")[: int(t["top_k"])]
    rationales = [int(i) for i in order if relevance[i] >= t["rationale"]]
    if not rationales:
        return AbstractLabel("NEI", float(probs[order[0], 2]), ())
    support = float(probs[rationales, 0].sum())
    contradict = float(probs[rationales, 1].sum()) * t["contradict_weight"]
    column = 0 if support >= contradict else 1
    label = "SUPPORT" if column == 0 else "CONTRADICT"
    return AbstractLabel(label, float(probs[rationales, column].max()), tuple(sorted(rationales)))
