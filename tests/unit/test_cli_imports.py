"""The command line pays only for what a command uses: `--help` and the catalog commands
import no model client, Telegram library, tracing, MCP or language detector (importing the
whole application took 1.7 s on every command)."""

import os
import subprocess
import sys
from pathlib import Path

MARK = "--modules--"
HEAVY = (
    "openai", "langfuse", "telegram", "mcp", "lingua", "procrastinate", "sommelier.chat.service",
)  # fmt: skip


def _imported(code: str, env: dict[str, str] | None = None) -> set[str]:
    probe = f"{code}\nimport sys\nprint('{MARK}', *sys.modules, sep='\\n')"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    loaded = set(done.stdout.split(MARK)[-1].split())  # the command's own output is before
    return {h for h in HEAVY if h in loaded}


def _command(*args: str) -> str:
    return (
        f"import sommelier.cli as c\ntry:\n    c.cli({list(args)!r})\nexcept SystemExit:\n    pass"
    )


def test_help_imports_nothing_heavy() -> None:
    assert _imported(_command("--help")) == set()


def test_a_catalog_search_imports_no_model_client_tracing_or_telegram(tmp_path: Path) -> None:
    env = {**os.environ, "SOMMELIER_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"}
    env = {k: v for k, v in env.items() if not k.startswith("LANGFUSE_")}
    # lingua reads the query's language, as a person's message is read.
    assert _imported(_command("catalog", "search", "malbec"), env) <= {"lingua"}
