"""The root of every error research-engine raises on purpose, here in the contracts, which every
library above the word lists and the privacy guards stands on, so each of them (the client
included, which depends on the contracts and not on the platform) can put its own errors under it.

ResearchEngineError
├── PrepareError, TransientError      research_platform.errors (how a message is settled)
│   └── ToolsUnavailable              research_modes.errors (a TransientError)
├── EmbeddedServerError               research_platform.errors (also a RuntimeError)
├── CorpusError                       research_corpus.errors
├── AgentError                        research_agents.errors
├── SourcesDown                       research_modes.errors
├── ConnectorError                    research_connector.errors
├── LLMError                          research_llm.errors (DoesNotFit also a ValueError)
├── VerificationError                 research_verification.errors
├── JudgementError                    research_judgement.errors
│   └── WeightsUnavailable            (also a RuntimeError)
└── ApiError                          research_client.errors (the gateway answered non-2xx)

Two libraries sit below this one and so cannot raise under it: `research_privacy` (whose
`UncleanText`, in `research_privacy.errors`, is a ValueError so that pydantic reports it as a
validation error of the contract field that carried the text) and `research_text` (whose
`UnknownWordList` is a LookupError: a word list asked for by a name that does not ship, a
programming error).
"""

from __future__ import annotations


class ResearchEngineError(Exception):
    """Base of every error research-engine raises on purpose."""
