"""The process's models, configured by an entry point (the CLI, a benchmark, a script) from its
settings: the embedding model (`research_corpus.embedding.configure_embedder`) and the judgement
models (`research_judgement.configure_judgement`). A service's `main.py` does the same from its
own settings; libraries only read the section they were handed."""

from __future__ import annotations

from research_platform.settings import Settings, get_settings


def configure_models(settings: Settings | None = None) -> Settings:
    """Hand the process-wide models their sections of `settings` (default: this process's, read
    once); returns the settings used."""
    from research_corpus.embedding import configure_embedder
    from research_judgement import configure_judgement

    settings = settings or get_settings()
    configure_embedder(settings.corpus)
    configure_judgement(settings.judgement)
    return settings
