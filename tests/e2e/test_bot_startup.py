"""`sommelier bot` that cannot start says why in one line, and never shows the token."""

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.telegram import new_token


def run_bot(
    tmp_path: Path, token: str, base_url: str, command: str = "bot", **settings: str
) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update({"SOMMELIER_TELEGRAM_BOT_TOKEN": token, "SOMMELIER_TELEGRAM_BASE_URL": base_url})
    env.update({f"SOMMELIER_{name.upper()}": value for name, value in settings.items()})
    return subprocess.run(
        [sys.executable, "-m", "sommelier.cli", command],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


class Unauthorized(BaseHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        return None

    def do_POST(self) -> None:
        body = b'{"ok": false, "error_code": 401, "description": "Unauthorized"}'
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_rejected_token_is_one_line_without_the_token(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token = new_token()
    try:
        result = run_bot(tmp_path, token, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
    assert result.returncode == 2
    assert "Telegram refused the bot token" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert token not in result.stdout + result.stderr
    assert token.split(":")[1] not in result.stdout + result.stderr


def test_no_network_is_one_line_without_the_token(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = new_token()
    result = run_bot(tmp_path, token, f"http://127.0.0.1:{port}")
    assert result.returncode == 1
    assert "cannot reach Telegram" in result.stderr and "Traceback" not in result.stderr
    assert token not in result.stdout + result.stderr
    assert token.split(":")[1] not in result.stdout + result.stderr


def test_a_database_that_cannot_be_reached_is_named_as_such(
    tmp_path: Path, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    """Telegram answers, the database does not: the worker and the bot say it is the database
    (it was "cannot reach Telegram"), in one line."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://postgres@127.0.0.1:{port}/sommelier"
    for command in ("worker", "bot"):
        result = run_bot(
            tmp_path, new_token(), telegram_emulator.url, command,
            database_url=url, telegram_queue="true",
        )  # fmt: skip
        assert result.returncode == 1, result.stderr
        assert (
            "the database at postgresql" in result.stderr and f"127.0.0.1:{port}" in result.stderr
        )
        assert "cannot be reached" in result.stderr and "Telegram" not in result.stderr
        assert "Traceback" not in result.stderr
