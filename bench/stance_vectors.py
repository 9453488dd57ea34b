"""The critic's stance check, question embedded as a statement vs the researcher's topic vector.

The critic turns a task's question into a statement ("Is it true that X?" → "X") and embeds it
for the passage classifier, although the researcher already stored a vector of the question's
topic with the claim. This measures what reusing that vector would cost: SciFact *train* claims
(the split the classifier was trained on, so both numbers are optimistic; only their difference
matters) are asked as "Is it true that <claim>?", their gold rationale sentences (up to three,
from the first evidence abstract) are the claim's quotes, and the stance the check finds is
compared with the gold label (SUPPORT / CONTRADICT).

    .venv/bin/python bench/stance_vectors.py [--claims 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from research_corpus.embedding import get_embedder  # noqa: E402
from research_researcher.prepare import guard_question  # noqa: E402
from research_verification.classifier import PassageClassifier  # noqa: E402
from research_verification.stance import AnswerStance, judge_answer, question_as_statement  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"


class Aliased:
    """The model, except that a text in `alias` is embedded as the text it maps to: the stance
    check then runs unchanged on the vector the critic would have reused."""

    def __init__(self) -> None:
        self.model = get_embedder()
        self.alias: dict[str, str] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.model.embed([self.alias.get(t, t) for t in texts])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=300)
    args = parser.parse_args()
    claims = [json.loads(line) for line in (DATA / "claims_train.jsonl").read_text().splitlines() if line.strip()]
    lines = (DATA / "corpus.jsonl").read_text().splitlines()
    corpus = {str(d["doc_id"]): d for d in (json.loads(line) for line in lines if line.strip())}
    random.Random(0).shuffle(claims)
    aliased = Aliased()
    reusing = PassageClassifier.load(embedder=aliased)
    n = agree = right_statement = right_topic = 0
    for claim in claims:
        if n >= args.claims or not claim.get("evidence"):
            continue
        doc_id, sets = next(iter(claim["evidence"].items()))
        if str(doc_id) not in corpus:
            continue
        quotes = [corpus[str(doc_id)]["abstract"][i] for s in sets for i in s["sentences"]][:3]
        gold = AnswerStance.SUPPORT if sets[0]["label"].startswith("SUPPORT") else AnswerStance.CONTRADICT
        question = f"Is it true that {claim['claim'].rstrip('.')}?"
        stored = dict(zip(quotes, aliased.model.embed(quotes), strict=True))  # as corpus_sentences holds them
        a = judge_answer(question, quotes, known_vectors=stored).stance
        aliased.alias = {question_as_statement(question): guard_question(question).topic_query}
        b = judge_answer(question, quotes, reusing, known_vectors=stored).stance
        n += 1
        agree += a is b
        right_statement += a is gold
        right_topic += b is gold
    print(f"claims {n}: right stance with the statement's vector {right_statement / n:.3f}, "
          f"with the topic's vector {right_topic / n:.3f}, agreement {agree / n:.3f}")
    print(f"bench:stance_vectors claims={n} right_statement={right_statement / n:.3f} right_topic={right_topic / n:.3f}")


if __name__ == "__main__":
    main()
