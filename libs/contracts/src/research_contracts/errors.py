"""The root of every error research-engine raises on purpose, here at the bottom of the libraries
so each of them (the client included, which depends on the contracts and not on the platform)
can put its own errors under it.

ResearchEngineError
├── PrepareError, TransientError      research_platform.errors (how a message is settled)
├── CorpusError                       research_corpus.errors
├── AgentError                        research_agents.errors
├── SourcesDown                       research_modes.connector
├── ConnectorError                    research_connector.errors
├── LLMError                          research_llm.errors
├── VerificationError                 research_verification.errors
├── WeightsUnavailable                research_judgement.judge (also a RuntimeError)
├── EmbeddedServerError               research_platform.embedded (also a RuntimeError)
└── ApiError                          research_client.errors (the gateway answered non-2xx)
"""

from __future__ import annotations


class ResearchEngineError(Exception):
    """Base of every error research-engine raises on purpose."""
