"""A Langfuse that hangs or refuses connections never fails or holds up a turn; secrets never
leave the process in logs or traces."""

import io
import json
import logging
import socket
import threading
import uuid

import pytest
from langfuse import Langfuse

from sommelier.observability.langfuse_tracer import LangfuseTracer
from sommelier.observability.logs import configure_logging
from tests.support.chat import ANA
from tests.support.fake_openai import completion
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.tracing import capture


class HangingServer:
    """Accepts connections, reads nothing back, answers never."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.connections: list[socket.socket] = []
        self.first_connection = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            self.first_connection.set()

    def stop(self) -> None:
        self.sock.close()
        for conn in self.connections:
            conn.close()
        self._thread.join(timeout=5)


def langfuse_at(base_url: str) -> LangfuseTracer:
    client = Langfuse(
        public_key=f"pk-lf-{uuid.uuid4().hex}",
        secret_key="sk-lf-test",
        base_url=base_url,
        flush_interval=0.05,
        timeout=3,
    )
    return LangfuseTracer(client)


@pytest.fixture(autouse=True)
def _native(sqlite_app):  # type: ignore[no-untyped-def]
    settings = sqlite_app.settings
    sqlite_app.settings = settings.model_validate(
        {**settings.model_dump(), "agent_strategy": "native"}
    )


def script(turns: int) -> ScriptedModel:
    steps = []
    for turn in range(turns):
        pick = reply(["sm-059"], intro=f"Malbec number {turn}.")
        steps += [tools(("search_wines", {"grape": "malbec"})), answer(pick)]
    return ScriptedModel(steps)


async def test_hanging_langfuse_does_not_hold_up_turns(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    server = HangingServer()
    tracer = langfuse_at(server.url)
    try:
        service = sqlite_app.chat_service(script(6), tracer)
        assert (await service.turn(ANA, "malbec")).ok
        # The exporter is now stuck on a request that will not be answered (3 s timeout) …
        assert server.first_connection.wait(10)
        # … and turns still run, one after another, while it waits.
        for _ in range(5):
            assert (await service.turn(ANA, "malbec")).ok
        assert server.connections, "the exporter should still be waiting on Langfuse"
    finally:
        server.stop()
        tracer.shutdown()


async def test_refused_langfuse_does_not_fail_turns(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tracer = langfuse_at(f"http://127.0.0.1:{port}")
    try:
        service = sqlite_app.chat_service(script(3), tracer)
        for _ in range(3):
            assert (await service.turn(ANA, "malbec")).ok  # export fails in the background
    finally:
        tracer.shutdown()


@pytest.fixture
def json_logs():  # type: ignore[no-untyped-def]
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    yield stream
    root.handlers[:], level = saved
    root.setLevel(level)


async def test_secrets_never_appear_in_logs_or_traces(sqlite_app, fake_openai, json_logs) -> None:  # type: ignore[no-untyped-def]
    api_key = "sk-test-" + "S3cr3tV4lu3" * 3
    bot_token = "123456789:" + "T0k3n" * 7
    sqlite_app.settings = sqlite_app.settings.model_copy(
        update={
            "llm_base_url": fake_openai.base_url,
            "llm_api_key": api_key,
            "log_level": "DEBUG",
            "log_format": "json",
        }
    )
    configure_logging(
        sqlite_app.settings, console=False, extra_secrets=[bot_token], stream=json_logs
    )
    captured = capture()
    fake_openai.add(
        completion(tool_calls=[("search_wines", {"grape": "malbec"})]),
        completion("Let me think about it."),  # a tool round that ends in text
        completion("not json"),  # the answer call, repaired once
        completion(reply(["sm-059"])),
    )
    sqlite_app.settings = sqlite_app.settings.model_validate(
        {**sqlite_app.settings.model_dump(), "agent_strategy": "native"}
    )
    service = sqlite_app.chat_service(tracer=captured.tracer)
    result = await service.turn(ANA, "malbec")
    assert result.ok
    logging.getLogger("sommelier.test").warning("token check %s", bot_token)
    logs = json_logs.getvalue()
    events = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    names = {e.get("event") for e in events}
    assert {"llm_request_started", "llm_request_completed", "structured_output_retry"} <= names
    started = next(e for e in events if e.get("event") == "llm_request_started")
    assert started["endpoint"] == fake_openai.base_url and started["message_count"] >= 2
    assert api_key not in logs and bot_token not in logs
    traces = json.dumps([dict(s.attributes) for s in captured.spans()], default=str)
    assert api_key not in traces
