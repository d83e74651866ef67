"""How long the command line takes as a person meets it: whole processes, wall seconds (median
and p95 of N runs after one warm-up) and peak memory, for `sommelier --help`, `catalog
search malbec` on a prepared SQLite database, and `chat --message` with no model (the catalog-
only answer: everything a one-shot chat costs except the model).

    .venv/bin/python bench/cli_startup_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench")]

from common import percentiles, report  # noqa: E402

COMMANDS = {
    "--help": ["--help"],
    "catalog search malbec": ["catalog", "search", "malbec"],
    "chat --message (no model)": ["chat", "--message", "a red for steak under 20 euros"],
}


def _once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, the child's peak MiB so far) of one run."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sommelier.cli", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return time.perf_counter() - started, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **{
                k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "SOMMELIER_"))
            },
            "SOMMELIER_DATABASE_URL": f"sqlite+aiosqlite:///{folder}/bench.db",
            "SOMMELIER_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # nothing answers there
            "SOMMELIER_LOG_LEVEL": "WARNING",
        }
        rows = []
        for name, args in COMMANDS.items():
            _once(args, env)  # warm-up: migrations, the starter catalog, the OS's file cache
            walls = [_once(args, env)[0] for _ in range(runs)]
            median, p95 = percentiles(walls)
            rows.append((name, f"median {median:.2f} s, p95 {p95:.2f} s"))
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        rows.append(("largest child", f"{peak:.0f} MiB peak"))
    report(f"command line, {runs} runs each (wall seconds)", rows)


if __name__ == "__main__":
    main()
