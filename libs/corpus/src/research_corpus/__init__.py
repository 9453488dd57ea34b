"""The local corpus: ingestion (`ingest`), hybrid search (`search`), analytics (`analytics`).

Embeddings come from `embedding.get_embedder()` (all-MiniLM-L6-v2, offline, loaded lazily).
Nothing here opens a connection at import; callers pass sessions.
"""
