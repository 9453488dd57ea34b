"""SQLAlchemy 2 typed models of the tables outside the ledger (DESIGN.md §3): the declarative
`Base` every table shares, the corpus's tables (papers, chunks, sentences, postings, lexemes), the
connector's cache and the agents' runs and controls. The ledger's tables (tasks, claims, verdicts,
findings, audit, reports, watched claims, source lists, keys, re-critiques) live in
`research_ledger.tables`; `migrations/env.py` sees both. Migrations live in `migrations/`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, REAL, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

EMBEDDING_DIM = 384


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSONB, list[Any]: JSONB}


def _now() -> Any:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


class AgentRun(Base):
    """One run of a periodic agent (correlator, replicator, librarian)."""

    __tablename__ = "agent_runs"
    __table_args__ = (Index("ix_agent_runs_agent_started", "agent", "started_at"),)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    agent: Mapped[str] = mapped_column(String(50))
    trigger: Mapped[str] = mapped_column(String(20), default="tick")
    started_at: Mapped[datetime] = _now()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    outcome: Mapped[str] = mapped_column(String(20), default="running")
    counts: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    error: Mapped[str | None] = mapped_column(Text)


class AgentControl(Base):
    """Operator switches of one periodic agent, shared by all its replicas (pause, cancel a run)."""

    __tablename__ = "agent_controls"

    agent: Mapped[str] = mapped_column(String(50), primary_key=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    cancel_run_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    updated_by: Mapped[str | None] = mapped_column(String(100))
    updated_at: Mapped[datetime] = _now()


class CorpusPaper(Base):
    """A paper of the local corpus; `external_id` is its id in the ingested file."""

    __tablename__ = "corpus_papers"
    __table_args__ = (UniqueConstraint("external_id", name="uq_corpus_papers_external_id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(String(300))
    title: Mapped[str] = mapped_column(Text, default="")
    abstract: Mapped[str] = mapped_column(Text, default="")
    authors: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    year: Mapped[int | None] = mapped_column(Integer, index=True)
    venue: Mapped[str | None] = mapped_column(Text)
    doi: Mapped[str | None] = mapped_column(String(300))
    citation_count: Mapped[int | None] = mapped_column(Integer)
    keywords: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    content_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = _now()


class CorpusChunk(Base):
    """A searchable passage of a corpus paper with its embedding (its full-text vector is not
    stored: BM25 reads `CorpusPosting`, computed from it at ingest; migration 0020)."""

    __tablename__ = "corpus_chunks"
    __table_args__ = (
        UniqueConstraint("paper_id", "chunk_index", name="uq_corpus_chunks_paper_chunk"),
        Index(
            "ix_corpus_chunks_embedding",
            "embedding",
            postgresql_using="hnsw",
            postgresql_ops={"embedding": "halfvec_cosine_ops"},
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    paper_id: Mapped[int] = mapped_column(
        ForeignKey("corpus_papers.id", ondelete="CASCADE"), index=True
    )
    chunk_index: Mapped[int] = mapped_column(Integer)
    section: Mapped[str] = mapped_column(String(50), default="abstract")
    locator: Mapped[str] = mapped_column(String(100), default="abstract")
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[Any] = mapped_column(HALFVEC(EMBEDDING_DIM))  # half precision: migration 0019
    token_count: Mapped[int] = mapped_column(Integer, default=0)  # BM25 document length


class CorpusSentence(Base):
    """The vector of one evidence sentence, keyed by a digest of its normalised text.

    Filled by the corpus ingest (`research_corpus.sentence_vectors`) so the offline engine never
    embeds corpus text at run time; shared by every paper that contains the sentence.
    """

    __tablename__ = "corpus_sentences"

    key: Mapped[bytes] = mapped_column(
        LargeBinary(16), primary_key=True
    )  # `research_corpus.sentences.sentence_key`
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=False)


class CorpusEmbedding(Base):
    """Which model made the corpus's vectors (one row, id 1; absent while the corpus is empty).

    `model` is `Embedder.model_id` (`all-MiniLM-L6-v2/int8`); `reembedding_to` is set while
    `research-engine corpus reembed` converts the vectors to another model (they are mixed until
    it finishes). See `research_corpus.stamp`."""

    __tablename__ = "corpus_embedding"
    __table_args__ = (CheckConstraint("id = 1", name="ck_corpus_embedding_one_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    reembedding_to: Mapped[str | None] = mapped_column(String(200))
    updated_at: Mapped[datetime] = _now()


class CorpusLexeme(Base):
    """Document frequency of each full-text lexeme over `corpus_chunks` (BM25 idf), refreshed per ingest."""

    __tablename__ = "corpus_lexemes"

    lexeme: Mapped[str] = mapped_column(Text, primary_key=True)
    doc_freq: Mapped[int] = mapped_column(Integer)


class CorpusStats(Base):
    """Corpus-wide BM25 statistics (one row, id 1), refreshed with `corpus_lexemes`."""

    __tablename__ = "corpus_stats"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chunks: Mapped[int] = mapped_column(Integer)
    avg_doc_len: Mapped[float] = mapped_column(Float)


class CorpusPosting(Base):
    """Inverted index for BM25: a lexeme's occurrences in one chunk's text and title (from its tsvector).

    `impact` orders a lexeme's postings by their BM25 term score (migration 0013): search reads
    them through `ix_corpus_postings_impact` (lexeme, impact DESC), which covers every column. The
    table has no primary key in the database (the index would hold the same columns twice); the
    mapper's key below is the pair that identifies a row. Compact (migration 0020): counts are
    `smallint`, the chunk id `integer`, fixed-width columns first so rows are not padded."""

    __tablename__ = "corpus_postings"
    __table_args__ = (
        Index(
            "ix_corpus_postings_impact",
            "lexeme",
            text("impact DESC"),
            postgresql_include=["chunk_id", "tf_text", "tf_title", "doc_len"],
            postgresql_with={"fillfactor": 100},
        ),
        # postings are written in chunk-id order: a BRIN finds a chunk's postings (migration 0020)
        Index(
            "ix_corpus_postings_chunk_id",
            "chunk_id",
            postgresql_using="brin",
            postgresql_with={"pages_per_range": 16},
        ),
    )

    chunk_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("corpus_chunks.id", ondelete="CASCADE")
    )
    impact: Mapped[float] = mapped_column(REAL)
    tf_text: Mapped[int] = mapped_column(SmallInteger)
    tf_title: Mapped[int] = mapped_column(SmallInteger)
    doc_len: Mapped[int] = mapped_column(SmallInteger)  # the chunk's length, capped at 32,767
    lexeme: Mapped[str] = mapped_column(Text)

    __mapper_args__ = {"primary_key": [lexeme, chunk_id]}  # noqa: RUF012 - read once by the mapper


class ConnectorCacheEntry(Base):
    """A source's answer to one normalised request, reused for 24 h by the connector service."""

    __tablename__ = "connector_cache"
    __table_args__ = (Index("ix_connector_cache_expires", "expires_at"),)

    key: Mapped[str] = mapped_column(
        String(64), primary_key=True
    )  # sha256 of the normalised request
    source: Mapped[str] = mapped_column(String(50))
    request: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    hits: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
