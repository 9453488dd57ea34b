"""Recall of the privacy guard per identifier class on the synthetic probe set.

    .venv/bin/python bench/privacy_probe.py [--size 240] [--seed 16] [--show 5]

Two outbound paths, both in-process (tests/privacy/test_capture.py repeats them over HTTP):
- query: `outbound_query` of the question (what a connector receives);
- prompt: the question and patient context as the researcher sends them to a remote model
  (`outbound_text`: placeholders for identifiers and for any token outside the vocabulary);
- free_text: the pattern + allow-list de-identifier alone (`deidentify`, used for evidence).
A value counts as caught when neither it nor any of its tokens of 3+ characters appears in
the outbound text. Prints `bench:privacy recall_<path>_<class>=…` lines and a table.
"""

from __future__ import annotations

import argparse
import time

from research_privacy import Deidentified, delimit, deidentify, outbound_query, outbound_text
from research_privacy.probes import CLASSES, leaked_tokens, probe_set


def outbound(probe) -> dict[str, str]:  # type: ignore[no-untyped-def]
    table = Deidentified(text="")
    prompt = outbound_text(delimit(probe.question), into=table).text + "\n"
    prompt += outbound_text(delimit(probe.patient_ref), into=table).text
    # `free_text` is the pattern + allow-list de-identifier alone (what evidence passages get).
    loose = Deidentified(text="")
    free_text = deidentify(probe.question, into=loose).text + "\n" + deidentify(probe.patient_ref, into=loose).text
    return {"query": outbound_query(probe.question), "prompt": prompt, "free_text": free_text}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=240)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--show", type=int, default=5, help="print this many leaks per path")
    args = parser.parse_args()
    probes = probe_set(seed=args.seed, size=args.size)
    caught = {(path, c): 0 for path in ("query", "prompt", "free_text") for c in CLASSES}
    shown = {"query": 0, "prompt": 0, "free_text": 0}
    started = time.perf_counter()
    for probe in probes:
        texts = outbound(probe)
        for path, text in texts.items():
            for cls in CLASSES:
                leaks = leaked_tokens(probe.values[cls], text)
                if not leaks:
                    caught[(path, cls)] += 1
                elif shown[path] < args.show:
                    shown[path] += 1
                    print(f"leak {path} {cls} {probe.locale}: {leaks} <- {probe.values[cls]!r}\n    {text[:300]!r}")
    elapsed = time.perf_counter() - started
    print(f"{'path':8}" + "".join(f"{c:>9}" for c in CLASSES))
    for path in ("query", "prompt", "free_text"):
        print(f"{path:8}" + "".join(f"{caught[(path, c)] / len(probes):9.3f}" for c in CLASSES))
    for (path, cls), n in caught.items():
        print(f"bench:privacy recall_{path}_{cls}={n / len(probes):.3f}")
    print(f"bench:privacy probes={len(probes)} seconds_per_probe={elapsed / len(probes):.4f}")


if __name__ == "__main__":
    main()
