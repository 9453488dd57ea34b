"""Which reader reads an input: `detect_format` names the format of a file or folder (`auto` on the
command line). Above the readers it chooses among (`records` for JSONL, `library` for
reference-manager exports, `pdf` for a folder of PDFs), so none of them imports another to ask."""

from __future__ import annotations

import json
from pathlib import Path

from research_corpus.library import sniff_library


def detect_format(path: Path) -> str:
    """`pdf-dir` for a folder; a library export by its extension or first characters (`@`, `TY  -`,
    `[`); `scifact` when the first record has `doc_id`, else `jsonl`."""
    if path.is_dir():
        return "pdf-dir"
    with path.open(encoding="utf-8", errors="replace") as handle:
        library = sniff_library(path, handle.read(4096))
    if library:
        return library
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    first = json.loads(raw)
                except json.JSONDecodeError:
                    return "jsonl"
                return "scifact" if isinstance(first, dict) and "doc_id" in first else "jsonl"
    return "jsonl"
