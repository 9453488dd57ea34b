"""ClinicalTrials.gov API v2 (`/studies`, `/studies/{nctId}`). Ids are `nct:<NCT id>`.

Trial facts land in `metadata`: phases, overall status, study type, conditions, enrollment,
whether results are posted, the lead sponsor. Contacts' phones and e-mails are deliberately
not carried: evidence needs the study, not the people to call. About 50 requests per minute.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from research_connector.sources.base import Source, clean_text, json_body
from research_contracts import SourceHit, TaskFilters


def _iso_date(value: str | None) -> tuple[int | None, date | None]:
    if not value or not value[:4].isdigit():
        return None, None
    try:
        return int(value[:4]), date.fromisoformat(value) if len(value) == 10 else None
    except ValueError:
        return int(value[:4]), None


def parse_study(study: dict[str, Any]) -> SourceHit:
    """One v2 study record (protocolSection + derivedSection + hasResults) as a hit."""
    protocol = study["protocolSection"]
    ident = protocol["identificationModule"]
    status = protocol.get("statusModule", {})
    design = protocol.get("designModule", {})
    description = protocol.get("descriptionModule", {})
    conditions = protocol.get("conditionsModule", {})
    sponsor = protocol.get("sponsorCollaboratorsModule", {})
    officials = protocol.get("contactsLocationsModule", {}).get("overallOfficials", [])
    nct = ident["nctId"]
    first_posted = (status.get("studyFirstPostDateStruct") or {}).get("date")
    start = (status.get("startDateStruct") or {}).get("date")
    year, when = _iso_date(first_posted or start)
    return SourceHit(
        source_id=f"nct:{nct}",
        source="clinicaltrials",
        title=clean_text(ident.get("officialTitle") or ident.get("briefTitle")),
        authors=[o["name"] for o in officials if o.get("name")],
        venue="ClinicalTrials.gov",
        year=year,
        date=when,
        url=f"https://clinicaltrials.gov/study/{nct}",
        abstract=clean_text(description.get("briefSummary")),
        metadata={
            "nct_id": nct,
            "brief_title": ident.get("briefTitle"),
            "phases": design.get("phases", []),
            "overall_status": status.get("overallStatus"),
            "study_type": design.get("studyType"),
            "allocation": (design.get("designInfo") or {}).get("allocation"),
            "enrollment": (design.get("enrollmentInfo") or {}).get("count"),
            "conditions": conditions.get("conditions", []),
            "keywords": conditions.get("keywords", []),
            "start_date": start,
            "has_results": bool(study.get("hasResults")),
            "lead_sponsor": (sponsor.get("leadSponsor") or {}).get("name"),
            "publication_types": ["Clinical Trial Registration"],
        },
    )


def parse_studies(payload: dict[str, Any]) -> list[SourceHit]:
    """Every study of a `/studies` page."""
    return [parse_study(study) for study in payload["studies"]]


class ClinicalTrialsSource(Source):
    """ClinicalTrials.gov registrations (optional `X-API-Key`)."""

    name = "clinicaltrials"
    key_header = "X-API-Key"

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        params: dict[str, Any] = {"query.term": query, "pageSize": limit, "format": "json"}
        if filters.year_from or filters.year_to:
            low = f"{filters.year_from}-01-01" if filters.year_from else "MIN"
            high = f"{filters.year_to}-12-31" if filters.year_to else "MAX"
            params["filter.advanced"] = f"AREA[StudyFirstPostDate]RANGE[{low},{high}]"
        response = await self.http.request(
            "GET", f"{self.settings.base_url}/studies", params=params, headers=self._headers()
        )
        return parse_studies(json_body(response))

    async def _fetch(self, source_id: str) -> SourceHit | None:
        nct = source_id.removeprefix("nct:").strip().upper()
        if not nct.startswith("NCT"):
            return None
        response = await self.http.request_or_none(
            "GET",
            f"{self.settings.base_url}/studies/{nct}",
            params={"format": "json"},
            headers=self._headers(),
        )
        return parse_study(json_body(response)) if response is not None else None
