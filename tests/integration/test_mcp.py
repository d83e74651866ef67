"""MCP on both sides, with real subprocesses: `sommelier mcp serve` used by the official MCP
client (stdio and streamable HTTP), and MCP servers' tools used by the agent, including a server
that hangs, one that answers oddly and one that is not an MCP server at all."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from sqlalchemy import select

from sommelier.catalog.tools import CatalogTools
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from sommelier.db.models import User
from sommelier.db.repositories import Person
from tests.support.chat import ANA, native
from tests.support.scripted import ScriptedModel, answer, from_results, reply, tools

ROOT = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "-m", "sommelier.cli", "mcp", "serve"]
BOB = Person(channel="cli", local_name="bob", display_name="Bob")


def _env(app: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update({"SOMMELIER_DATABASE_URL": app.settings.database_url, "PYTHONPATH": str(ROOT)})
    return env


def _stdio(app: Any, command: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=command[0], args=command[1:], env=_env(app), cwd=ROOT)


async def test_the_catalog_server_offers_the_agents_tools_over_stdio(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    async with Client(_stdio(sqlite_app, SERVE), read_timeout_seconds=60) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_wines", {"type": "red", "country": "france"})
        bad = await client.call_tool("search_wines", {"type": "red", "limit": 500})
        wine = await client.call_tool("get_wine", {"ids": ["sm-059"]})
    agent_tools = CatalogTools(sqlite_app.sessions).registry().tools
    assert set(listed) == {"search_wines", "get_wine"}
    for name, tool in listed.items():
        assert tool.input_schema == agent_tools[name].schema()  # the same schemas and limits
    assert not found.is_error and found.structured_content["total"] == 9
    assert bad.is_error and "limit" in bad.content[0].text
    assert "Catena Malbec" in wine.content[0].text


async def test_a_wine_resource_and_the_pair_prompt_through_the_official_client(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """The catalog beyond tools: a wine's row by `wine://{id}`, and the `pair` prompt, with
    bad arguments refused by name; the lists carry a cache hint."""
    async with Client(_stdio(sqlite_app, SERVE), read_timeout_seconds=60) as client:
        templates = await client.list_resource_templates()
        wine = await client.read_resource("wine://sm-059")
        prompts = await client.list_prompts()
        pair = await client.get_prompt("pair", {"dish": "grilled lamb", "budget": "25"})
        listed = await client.list_tools()
        errors = {}
        for name, attempt in {
            "missing": client.read_resource("wine://sm-999999"),
            "scheme": client.read_resource("file:///etc/passwd"),
            "dish": client.get_prompt("pair", {"dish": ""}),
            "budget": client.get_prompt("pair", {"dish": "lamb", "budget": "-3"}),
        }.items():
            with pytest.raises(MCPError) as caught:
                await attempt
            errors[name] = caught.value.message
    assert [t.uri_template for t in templates.resource_templates] == ["wine://{id}"]
    row = json.loads(wine.contents[0].text)
    assert row["name"] == "Catena Malbec" and wine.contents[0].mime_type == "application/json"
    assert [p.name for p in prompts.prompts] == ["pair"]
    question = pair.messages[0].content.text
    assert "grilled lamb" in question and "25" in question and "search_wines" in question
    assert listed.ttl_ms and listed.ttl_ms > 0
    assert "sm-999999" in errors["missing"] and "wine://" in errors["scheme"]
    assert "dish" in errors["dish"] and "budget" in errors["budget"]


async def test_one_persons_cellar_read_only_as_a_tool_and_a_resource(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """`--cellar-of ana`: her bottles by readiness, filtered by a readiness, and the same as
    JSON at cellar://mine; nobody else's, and nothing written for a name with no cellar."""
    rows = [
        CellarRow(1, "Catena Malbec", 2, "Catena Zapata", "2021", "rack A"),
        CellarRow(2, "Moët & Chandon Impérial Brut", 1, "Moët & Chandon", "NV", "fridge"),
    ]
    async with sqlite_app.sessions() as session:
        cellar = await cellar_of(session, await owner_of(session, ANA))
        await add_rows(session, cellar, rows, None, "csv")
        other = await cellar_of(session, await owner_of(session, BOB))
        await add_rows(
            session, other, [CellarRow(1, "Tignanello", 6, "Marchesi Antinori")], None, "csv"
        )
        await session.commit()
    async with Client(
        _stdio(sqlite_app, [*SERVE, "--cellar-of", "ana"]), read_timeout_seconds=60
    ) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        everything = await client.call_tool("my_cellar", {})
        at_peak = await client.call_tool("my_cellar", {"readiness": "peak"})
        bad = await client.call_tool("my_cellar", {"readiness": "soon"})
        listed = await client.list_resources()
        resource = await client.read_resource("cellar://mine")
    async with Client(
        _stdio(sqlite_app, [*SERVE, "--cellar-of", "nobody"]), read_timeout_seconds=60
    ) as client:
        empty = await client.call_tool("my_cellar", {})
    assert names == {"search_wines", "get_wine", "my_cellar"}
    assert everything.structured_content["bottles"] == 3
    assert "Tignanello" not in everything.content[0].text
    assert "2 × Catena Malbec 2021 · rack A" in everything.content[0].text
    assert {w["readiness"] for w in at_peak.structured_content["wines"]} == {"peak"}
    assert bad.is_error and "readiness" in bad.content[0].text
    assert [str(r.uri) for r in listed.resources] == ["cellar://mine"]
    assert json.loads(resource.contents[0].text) == everything.structured_content
    assert not empty.is_error and empty.structured_content == {"bottles": 0, "wines": []}
    async with sqlite_app.sessions() as session:
        assert await session.scalar(select(User).where(User.local_name == "nobody")) is None


async def test_the_catalog_server_over_streamable_http(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = await asyncio.create_subprocess_exec(
        *SERVE, "--http", "--port", str(port), env=_env(sqlite_app), cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.2)
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
            result = await client.call_tool("search_wines", {"grape": "malbec"})
    finally:
        server.terminate()
        await server.wait()
    assert not result.is_error
    assert "sm-059" in {w["id"] for w in result.structured_content["wines"]}


def _with_servers(app: Any, servers: dict[str, list[str]], timeout: float = 30.0) -> None:
    # The SDK passes a launched server only a few variables of ours, plus `env`.
    env = {"SOMMELIER_DATABASE_URL": app.settings.database_url, "PYTHONPATH": str(ROOT)}
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "mcp_servers": {
                name: {"command": command, "env": env} for name, command in servers.items()
            },
            "mcp_timeout": timeout,
        }
    )


async def test_the_agent_uses_a_namespaced_mcp_tool_and_grounds_its_wines(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    _with_servers(sqlite_app, {"shop": SERVE})
    await sqlite_app.connect_mcp()
    model = ScriptedModel(
        [
            # A wine request must still search this catalog; the shop's tool runs beside it.
            tools(("shop__get_wine", {"ids": ["sm-059"]}), ("search_wines", {"grape": "malbec"})),
            answer(reply(["sm-059"])),
        ]
    )
    result = await native(sqlite_app, model).turn(ANA, "a malbec please, is the Catena good?")
    assert result.ok and result.cards[0].wine_id == "sm-059"
    names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert {"search_wines", "get_wine", "shop__search_wines", "shop__get_wine"} <= set(names)
    shop_result = next(m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert "Catena Malbec" in shop_result


@pytest.mark.parametrize("mode", ["hang", "junk"])
async def test_an_odd_mcp_server_is_a_tool_error_or_ungrounded_never_a_crash(
    sqlite_app, mode
) -> None:  # type: ignore[no-untyped-def]
    _with_servers(
        sqlite_app, {"odd": [sys.executable, "-m", "tests.support.odd_mcp_server", mode]}, 2
    )
    await sqlite_app.connect_mcp()
    model = ScriptedModel(
        [
            tools(("odd__cellar", {"shelf": "top"}), ("odd__cellar", {"shelf": 1})),
            # Recommending the id only the odd server named: not grounded, so repaired.
            answer(reply(["zz-999"])),
            tools(("search_wines", {"grape": "malbec"})),
            from_results(1),
        ]
    )
    result = await native(sqlite_app, model).turn(ANA, "what's in my cellar? a malbec")
    assert result.ok and result.cards[0].wine_id == "sm-059"
    results = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    if mode == "hang":
        assert all("did not answer within 2 s" in r for r in results)
    else:
        assert "shelf must be a number" in results[0]
        assert "sm-059" in results[1] and "zz-999" in results[1]


async def test_a_server_that_is_not_mcp_is_skipped_at_start(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    _with_servers(
        sqlite_app, {"bad": [sys.executable, "-m", "tests.support.odd_mcp_server", "garbage"]}, 5
    )
    await sqlite_app.connect_mcp()
    assert sqlite_app.remote is not None and sqlite_app.remote.tools == []
    assert "MCP server bad unavailable" in caplog.text
    model = ScriptedModel([tools(("search_wines", {"grape": "malbec"})), from_results(1)])
    assert (await native(sqlite_app, model).turn(ANA, "a malbec please")).ok
