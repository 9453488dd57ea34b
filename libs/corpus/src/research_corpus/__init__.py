"""The local corpus: ingestion (`ingest`), hybrid search (`search`), analytics (`analytics`).

Embeddings come from `embedding.get_embedder()` (all-MiniLM-L6-v2, offline, loaded lazily).
Nothing here opens a connection at import; callers pass sessions.
"""

from typing import TypeAlias

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

CorpusSessions: TypeAlias = async_sessionmaker[AsyncSession]
"""A session factory over the corpus's tables, as a service holds one for the corpus reads and
writes it makes itself (a service reaches the ledger's tables only through `research_ledger.Ledger`)."""

__all__ = ["CorpusSessions"]
