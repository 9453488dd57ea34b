"""Keep the Hugging Face libraries off the network: every model this engine runs ships in a package."""

from __future__ import annotations

import os


def keep_models_offline() -> None:
    """Set `HF_HUB_OFFLINE=1` and `TRANSFORMERS_OFFLINE=1` unless the environment already says.

    A write for libraries, not a setting this engine reads: huggingface_hub and transformers read
    these from the process environment (at import and at each load), so they must be in the process
    environment before a model is loaded; child processes inherit them. The one place the
    runtime code sets them (`research_engine.stack` sets them for its children through
    `research_platform.embedded.env_for`).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
