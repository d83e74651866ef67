"""`sommelier chat` as a person uses it, against a scripted OpenAI-compatible server."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.fake_openai import completion
from tests.support.scripted import plan, reply

PLAN = completion(plan().content)


def run_chat(tmp_path: Path, base_url: str, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update(
        {
            "SOMMELIER_LLM_BASE_URL": base_url,
            "SOMMELIER_LLM_MODEL": "fake-model",
            "SOMMELIER_LLM_NETWORK_RETRIES": "0",
            "COLUMNS": "100",
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "sommelier.cli", "chat", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )


def test_one_shot_answers_with_catalog_wines(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion(
            tool_calls=[("search_wines", {"type": "red", "max_price": 20, "food": "steak"})]
        ),
        completion(reply(["sm-059"], intro="For steak under 20 euros:")),
    )
    result = run_chat(tmp_path, fake_openai.base_url, "--message", "a red under 20 euros for steak")
    assert result.returncode == 0, result.stderr
    assert "For steak under 20 euros:" in result.stdout
    assert "Catena Malbec" in result.stdout and "17.00 EUR" in result.stdout


def test_one_shot_json(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion(tool_calls=[("search_wines", {"grape": "malbec"})]),
        completion(reply(["sm-058"])),
    )
    result = run_chat(tmp_path, fake_openai.base_url, "-m", "malbec", "--json", "--user", "bo")
    data = json.loads(result.stdout)
    assert data["status"] == "ok" and data["reply"]["wines"][0]["wine_id"] == "sm-058"
    assert data["cards"][0]["name"] == "Catena Zapata Malbec Argentino"


def test_unreachable_model_exits_non_zero_with_clear_message(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run_chat(tmp_path, f"http://127.0.0.1:{port}/v1", "--message", "hi")
    assert result.returncode == 3
    assert "model is unreachable" in result.stderr and "Traceback" not in result.stderr


def test_interactive_session_commands(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(PLAN, completion(reply([], "informational", intro="Chablis is Chardonnay.")))
    result = run_chat(
        tmp_path,
        fake_openai.base_url,
        "--user",
        "cy",
        stdin="what grape is chablis?\n/history\n/new\n/history\n/exit\n",
    )
    assert result.returncode == 0, result.stderr
    assert "Chablis is Chardonnay." in result.stdout
    assert "user> what grape is chablis?" in result.stdout
    assert "Started a fresh conversation." in result.stdout
    # After /new the history is empty: the user line appears once only.
    assert result.stdout.count("user> what grape is chablis?") == 1


def test_retry_sends_the_last_failed_message_again(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    from tests.support.fake_openai import error

    fake_openai.add(
        error(503, "overloaded"),
        PLAN,
        completion(reply([], "informational", intro="Barolo is Nebbiolo.")),
    )
    result = run_chat(
        tmp_path,
        fake_openai.base_url,
        "--user",
        "di",
        stdin="what grape is barolo?\n/retry\n/exit\n",
    )
    assert result.returncode == 0, result.stderr
    assert "/retry to send it again" in result.stdout and "Barolo is Nebbiolo." in result.stdout
    assert fake_openai.requests[1]["messages"][-1]["content"].startswith("what grape is barolo?")
