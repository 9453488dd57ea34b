"""Every error research-engine raises on purpose is a `ResearchEngineError`, whose one class lives
in `research_contracts.errors` (the platform re-exports it); errors that were `RuntimeError`s stay
catchable as such."""

from __future__ import annotations

import pytest

from research_client import ApiError
from research_contracts.errors import ResearchEngineError
from research_corpus.errors import CorpusError
from research_judgement.judge import WeightsUnavailable
from research_llm.errors import LLMError
from research_platform import errors as platform_errors
from research_platform.embedded import EmbeddedServerError
from research_verification.errors import ClaimParseError, VerificationError

pytestmark = pytest.mark.unit


def test_every_library_error_base_is_under_the_root() -> None:
    assert platform_errors.ResearchEngineError is ResearchEngineError
    for base in (
        LLMError,
        VerificationError,
        ApiError,
        EmbeddedServerError,
        WeightsUnavailable,
        CorpusError,
        platform_errors.PrepareError,
        platform_errors.TransientError,
    ):
        assert issubclass(base, ResearchEngineError), base


def test_the_errors_keep_their_other_bases() -> None:
    assert issubclass(EmbeddedServerError, RuntimeError)
    assert issubclass(WeightsUnavailable, RuntimeError)
    assert issubclass(ClaimParseError, ValueError)
    error = ApiError(403, "forbidden", method="GET", path="/claims", key_from="RESEARCH_API_KEY")
    assert str(error) == "GET /claims → 403: forbidden (key from RESEARCH_API_KEY)"
    with pytest.raises(ResearchEngineError):
        raise error
