"""A call tracer for measuring which of the repository's files a request runs through.

Put this folder first on PYTHONPATH and set `RE_TRACE_DIR`; every Python process started with
that environment (the CLI, `research-engine up` and each service it starts) records, for each
function of the repository's own code it enters, the half-second buckets it was entered in, and
writes them to `$RE_TRACE_DIR/<pid>.json` every second. `scripts/path_files.py` reads them.
A measuring tool only: it slows every call and is never installed.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

OUT = os.environ.get("RE_TRACE_DIR")
ROOT = str(Path(__file__).resolve().parents[2]) + os.sep


def _install(out: Path) -> None:
    seen: dict[str, set[int]] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        file = frame.f_code.co_filename
        if file.startswith(ROOT) and "site-packages" not in file:
            seen.setdefault(f"{file}::{frame.f_code.co_name}", set()).add(int(time.time() * 2))

    def dump() -> None:
        calls = {key: sorted(buckets) for key, buckets in list(seen.items())}
        path = out / f"{os.getpid()}.json"
        path.with_suffix(".tmp").write_text(json.dumps({"argv": sys.argv, "calls": calls}))
        path.with_suffix(".tmp").replace(path)

    def every_second() -> None:
        while True:
            time.sleep(1.0)
            dump()

    sys.setprofile(profile)
    threading.setprofile(profile)
    threading.Thread(target=every_second, daemon=True).start()
    atexit.register(dump)


if OUT:
    _install(Path(OUT))
