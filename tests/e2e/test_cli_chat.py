"""`sommelier chat` as a person uses it, against a scripted OpenAI-compatible server."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.support.fake_openai import completion
from tests.support.scripted import reply


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
    assert "Wines that are red and at €20.00 or less:" in result.stdout
    assert "Catena Malbec" in result.stdout and "€17.00" in result.stdout


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
    # It names the address that failed and the setting that fixes it.
    assert f"127.0.0.1:{port}" in result.stderr and "SOMMELIER_LLM_BASE_URL" in result.stderr


def test_without_a_model_a_wine_request_still_gets_wines_from_the_catalog(tmp_path: Path) -> None:
    """The real openai SDK against an address where nothing listens: the sommelier answers
    from the catalog, says so in one line, and exits 0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = run_chat(tmp_path, url, "--message", "a white wine for oysters", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "ok" and data["cards"]
    assert all(card["type"] in ("white", "sparkling") for card in data["cards"])
    assert "No model is answering right now" in data["text"]


def test_interactive_session_commands(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(completion(reply([], "informational", intro="Chablis is Chardonnay.")))
    result = run_chat(
        tmp_path,
        fake_openai.base_url,
        "--user",
        "cy",
        stdin="what grape is chablis?\n/history\n/new\n/history\n/wat\n/sessions\n/load 9\n"
        "/load 2\n/history\n/exit\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Chablis is Chardonnay." in out
    assert "Started a fresh conversation." in out
    assert "Nothing yet in this conversation." in out  # /history after /new
    assert "Unknown command /wat; see /help." in out
    # /sessions lists the fresh conversation first, then the first one with its question.
    assert "1. " in out and "2. " in out and "2 messages  what grape is chablis?" in out
    assert "Use /sessions, then /load N with a number from it." in out  # /load 9
    assert "Back in conversation 2" in out
    # The question shows up twice in /history: before /new and after /load 2.
    assert out.count("you> what grape is chablis?") == 2


def test_an_empty_message_is_refused(tmp_path: Path) -> None:
    result = run_chat(tmp_path, "http://127.0.0.1:9/v1", "--message", "  ")
    assert result.returncode == 2
    assert "--message is empty" in result.stderr and "Traceback" not in result.stderr


def test_retry_sends_the_last_failed_message_again(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    from tests.support.fake_openai import error
    from tests.support.scripted import plan_text

    # A question, not a wine request (a wine request would be answered from the catalog): the
    # planning call fails, then /retry plans and answers.
    fake_openai.add(
        error(503, "overloaded"),
        completion(plan_text("answer")),
        completion(reply([], "informational", intro="Barolo is Nebbiolo.")),
    )
    result = run_chat(
        tmp_path,
        fake_openai.base_url,
        "--user",
        "di",
        stdin="what is barolo made from?\n/retry\n/exit\n",
    )
    assert result.returncode == 0, result.stderr
    assert "/retry to send it again" in result.stdout and "Barolo is Nebbiolo." in result.stdout
    retried = [m["content"] for m in fake_openai.requests[1]["messages"] if m["role"] == "user"]
    assert retried[0].startswith("what is barolo made from?")  # the plan call's own request


def test_ctrl_c_stops_the_answer_and_keeps_the_chat(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    from tests.support.fake_openai import Reply

    fake_openai.add(Reply(delay=30, body={}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update({"SOMMELIER_LLM_BASE_URL": fake_openai.base_url, "SOMMELIER_LLM_MODEL": "m"})
    chat = subprocess.Popen(
        [sys.executable, "-m", "sommelier.cli", "chat", "--user", "ed"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert chat.stdin is not None
        chat.stdin.write("a red for steak\n")
        chat.stdin.flush()
        deadline = time.monotonic() + 60
        while not fake_openai.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake_openai.requests, "the turn never reached the model"
        chat.send_signal(signal.SIGINT)  # Ctrl-C while the model is writing
        out, err = chat.communicate("/exit\n", timeout=60)
    finally:
        if chat.poll() is None:
            chat.kill()
    assert chat.returncode == 0, err
    assert "Stopped. (/retry to ask again)" in out and "Traceback" not in err


def test_feedback_and_profile_commands(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(completion(reply([], "informational", intro="Chablis is Chardonnay.")))
    result = run_chat(
        tmp_path,
        fake_openai.base_url,
        "--user",
        "fi",
        stdin="/good\n/profile\nI don't drink red wine. What grape is chablis?\n/bad too short\n"
        "/profile\n/forget\n/profile\n/exit\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "There is no reply of mine to rate yet." in out  # /good before any reply
    assert out.count("I don't remember anything about your taste yet.") == 2  # before, after
    assert "Thanks, I'll do better." in out
    assert "Styles you'd rather avoid: red" in out
    assert "Forgotten: your taste profile is deleted." in out
    database = tmp_path / "data" / "sommelier" / "sommelier.db"
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT value, reason FROM feedback").fetchall() == [(-1, "too short")]
        assert db.execute("SELECT count(*) FROM taste_profiles").fetchone() == (0,)


def test_a_chat_killed_mid_turn_keeps_its_calls_and_offers_the_message_again(
    tmp_path: Path, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    from tests.support.fake_openai import Reply

    fake_openai.add(
        completion(tool_calls=[("search_wines", {"type": "red", "food": "steak"})]),
        Reply(delay=60, body={}),  # the answer that never comes: the process is killed first
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update(
        {
            "SOMMELIER_LLM_BASE_URL": fake_openai.base_url,
            "SOMMELIER_LLM_MODEL": "m",
            "SOMMELIER_AGENT_STRATEGY": "native",
            "SOMMELIER_DATABASE_URL": f"sqlite:///{tmp_path / 'chat.db'}",
        }
    )
    command = [sys.executable, "-m", "sommelier.cli", "chat", "--user", "ed"]
    chat = subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.PIPE, text=True)
    try:
        assert chat.stdin is not None
        chat.stdin.write("a red for steak\n")
        chat.stdin.flush()
        deadline = time.monotonic() + 60
        while len(fake_openai.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake_openai.requests) == 2, "the turn never reached its answer call"
        chat.kill()  # the process dies while the answer is being written
        chat.wait(timeout=30)
    finally:
        if chat.poll() is None:
            chat.kill()
    database = sqlite3.connect(tmp_path / "chat.db")
    calls = database.execute("SELECT attempt, purpose FROM model_calls").fetchall()
    statuses = database.execute("SELECT status FROM inbound_messages").fetchall()
    # An hour later: longer than any turn may take, waiting for the model included.
    database.execute("UPDATE inbound_messages SET received_at = datetime('now', '-1 hour')")
    database.commit()
    database.close()
    assert calls == [(1, "tool_round")]  # written when it finished, before the kill
    assert statuses == [("received",)]

    again = subprocess.run(
        command, cwd=tmp_path, env={**env, "COLUMNS": "200"}, input="/exit\n",
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "got no answer: the program stopped" in again.stdout, again.stderr
    database = sqlite3.connect(tmp_path / "chat.db")
    statuses = database.execute("SELECT status FROM inbound_messages").fetchall()
    database.close()
    assert statuses == [("interrupted",)]
