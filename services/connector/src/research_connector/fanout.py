"""The fan-out behind `research.connector.search`: ask several sources at once, merge, de-duplicate.

`search_all` never sends a query carrying personal identifiers to a source that would pass it
on (one audit row `connector.phi_refused`; those sources are `degraded: phi_refused`, and
`EvidenceFound.error` is set when no local source is left to answer). Every other source runs
concurrently under its own deadline; a source that misses it, degrades or is unknown adds an
entry to `EvidenceFound.degraded` and the others' hits still arrive.

Merging interleaves the sources round-robin (each keeps its own ranking, none crowds out the
rest; `limit` applies per source) and folds duplicates together: two hits are the same work
when they share a DOI, a PMID, or a normalised title. The first hit seen stays, missing fields
are filled from the duplicates, their ids are kept in `metadata.also_in`, and a work any source
reports retracted stays retracted.
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import Mapping

from research_connector import metrics
from research_connector.incidents import Incidents
from research_connector.phi import find_identifiers
from research_connector.registry import EvidenceSource
from research_connector.sources.base import SourceAnswer
from research_contracts import EvidenceFound, SourceHit, TaskFilters
from research_platform.logging import get_logger

log = get_logger(__name__)


def title_key(title: str) -> str | None:
    """Accents, case, punctuation and spacing removed; None for titles too short to trust."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().casefold()
    words = re.findall(r"[a-z0-9]+", folded)
    return " ".join(words) if len(words) >= 4 else None


def identity_keys(hit: SourceHit) -> list[str]:
    """Every key that identifies the work behind `hit` (DOI, PMID, normalised title)."""
    keys = []
    doi = hit.doi or (
        hit.source_id.removeprefix("doi:") if hit.source_id.startswith("doi:") else None
    )
    if doi:
        keys.append(f"doi:{doi.strip().lower()}")
    pmid = hit.metadata.get("pmid") or (
        hit.source_id.removeprefix("pmid:") if hit.source_id.startswith("pmid:") else None
    )
    if pmid:
        keys.append(f"pmid:{pmid}")
    title = title_key(hit.title)
    if title:
        keys.append(f"title:{title}")
    return keys


def _fold(kept: SourceHit, duplicate: SourceHit) -> SourceHit:
    updates: dict[str, object] = {}
    for name in ("title", "venue", "year", "date", "url", "abstract", "doi"):
        if not getattr(kept, name) and getattr(duplicate, name):
            updates[name] = getattr(duplicate, name)
    if not kept.authors and duplicate.authors:
        updates["authors"] = duplicate.authors
    metadata = dict(kept.metadata)
    metadata["also_in"] = [*metadata.get("also_in", []), duplicate.source_id]
    if duplicate.metadata.get("retracted") is True:
        metadata["retracted"] = True
    updates["metadata"] = metadata
    return kept.model_copy(update=updates)


def merge(answers: list[list[SourceHit]]) -> list[SourceHit]:
    """Round-robin interleave of per-source rankings with duplicates folded (see module doc)."""
    merged: list[SourceHit] = []
    owner: dict[str, int] = {}
    depth = max((len(hits) for hits in answers), default=0)
    for rank in range(depth):
        for hits in answers:
            if rank >= len(hits):
                continue
            hit = hits[rank]
            keys = identity_keys(hit)
            index = next((owner[key] for key in keys if key in owner), None)
            if index is None:
                index = len(merged)
                merged.append(hit)
            else:
                merged[index] = _fold(merged[index], hit)
            for key in (*keys, *identity_keys(merged[index])):
                owner.setdefault(key, index)
    return merged


async def _ask(
    source: EvidenceSource,
    query: str,
    filters: TaskFilters,
    limit: int,
    deadline_s: float,
    incidents: Incidents,
) -> SourceAnswer:
    """One source's answer within `deadline_s` (a miss or a failure degrades it, with an incident),
    counted and timed per source (`metrics.py`)."""
    started = time.perf_counter()
    answer: SourceAnswer
    try:
        async with asyncio.timeout(deadline_s):
            lookup = getattr(source, "lookup", None)
            if lookup is not None:
                answer = await lookup(query, filters, limit)
            else:
                answer = SourceAnswer(source.name, hits=await source.search(query, filters, limit))
    except TimeoutError:
        breakers = getattr(source, "breakers", None)
        if breakers is not None:  # a source too slow to answer counts against its circuit too
            await breakers.observe(source.name, "deadline")
        await incidents.degraded(
            source.name, "deadline", detail=f"no answer within {deadline_s:g}s"
        )
        answer = SourceAnswer(source.name, degraded="deadline")
    except Exception as exc:  # noqa: BLE001 - a source bug must not fail the whole search
        await incidents.degraded(source.name, "error", detail=type(exc).__name__)
        answer = SourceAnswer(source.name, degraded="error")
    metrics.looked_up(
        source.name,
        cached=answer.cached,
        degraded=answer.degraded,
        seconds=time.perf_counter() - started,
    )
    return answer


async def search_all(
    sources: list[str],
    query: str,
    filters: TaskFilters | None,
    limit: int,
    deadline_s: float,
    *,
    registry: Mapping[str, EvidenceSource],
    incidents: Incidents,
) -> EvidenceFound:
    """Ask `sources` for `query` concurrently, each within `deadline_s`, and merge their hits."""
    filters = filters or TaskFilters()
    found = EvidenceFound()
    wanted = []
    for name in dict.fromkeys(sources):
        if name in registry:
            wanted.append(registry[name])
        else:
            found.degraded[name] = "unknown_source"
    kinds = find_identifiers(query)
    outward = [s.name for s in wanted if getattr(s, "leaves_process", True)]
    if kinds and outward:
        await incidents.refused(",".join(outward), kinds)
        found.degraded.update({name: "phi_refused" for name in outward})
        wanted = [s for s in wanted if s.name not in outward]
        if not wanted:
            found.error = f"query refused: it carries personal identifiers ({', '.join(kinds)})"
            return found
    answers = await asyncio.gather(
        *(_ask(s, query, filters, limit, deadline_s, incidents) for s in wanted)
    )
    for answer in answers:
        if answer.degraded:
            found.degraded[answer.source] = answer.degraded
        if answer.facets:
            found.facets[answer.source] = answer.facets
    found.hits = merge([answer.hits for answer in answers])
    log.info(
        "evidence search",
        sources=[s.name for s in wanted],
        hits=len(found.hits),
        degraded=sorted(found.degraded),
        cached=[a.source for a in answers if a.cached],
    )
    return found
