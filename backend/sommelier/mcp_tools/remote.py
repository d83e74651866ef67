"""Tools from MCP servers listed in settings, as agent tools.

Discovered once at start and namespaced `<server>__<tool>` (OpenAI-compatible servers accept
only letters, digits, `_` and `-` in a function name, so the `.` of `server.tool` becomes
`__`). A call that fails in any way (the server's own argument error, a timeout, a dead or
malformed server) is a tool error the model reads, never a crashed turn. Wine ids in a result
count for grounding only when the catalog has them.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from sommelier.agent.tools import MAX_RESULT_CHARS, OpenArguments, Tool, ToolError, ToolOutput

log = logging.getLogger("sommelier.mcp")

SEPARATOR = "__"
_NAME = re.compile(r"[^A-Za-z0-9_-]")
_WINE_ID = re.compile(r"\b[a-z]{1,6}-\d{1,9}\b")

# ids → names of the ones the catalog has
KnownWines = Callable[[list[str]], Awaitable[dict[str, str]]]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One entry of SOMMELIER_MCP_SERVERS: a command to launch (stdio) or a URL (HTTP)."""

    name: str
    command: list[str] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = None

    def target(self) -> StdioServerParameters | str:
        if self.url:
            return self.url
        assert self.command
        env = dict(self.env) if self.env is not None else None
        return StdioServerParameters(command=self.command[0], args=self.command[1:], env=env)


def tool_name(server: str, tool: str) -> str:
    return _NAME.sub("_", f"{server}{SEPARATOR}{tool}")[:64]


def result_text(result: types.CallToolResult) -> str:
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return "\n".join(texts).strip()


class RemoteTools:
    """The connections to every configured MCP server, open for the app's lifetime.

    One task per server opens and closes its connection: the SDK's connections live in anyio
    task groups, which must be left by the task that entered them (PTB, for one, starts and
    stops the app in different tasks), and a server that breaks takes only itself down."""

    def __init__(self, timeout: float, known_wines: KnownWines) -> None:
        self.timeout = timeout
        self.known_wines = known_wines
        self.tools: list[Tool] = []
        self._closing = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def connect(self, servers: list[ServerConfig]) -> None:
        """Discover each server's tools; a server that is down or hangs is skipped, said once."""
        loop = asyncio.get_running_loop()
        readies: list[asyncio.Future[None]] = [loop.create_future() for _ in servers]
        self._tasks = [
            asyncio.create_task(self._hold(server, ready))
            for server, ready in zip(servers, readies, strict=True)
        ]
        await asyncio.gather(*readies)

    async def _hold(self, server: ServerConfig, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                await self._open(stack, server)
                ready.set_result(None)
                await self._closing.wait()
        except Exception:  # a connection that broke while the app ran
            log.warning(
                "MCP server %s disconnected",
                server.name,
                exc_info=True,
                extra={"event": "mcp_server_ended", "server": server.name},
            )
        finally:
            if not ready.done():
                ready.set_result(None)

    async def _open(self, stack: AsyncExitStack, server: ServerConfig) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                client = await stack.enter_async_context(
                    Client(server.target(), read_timeout_seconds=self.timeout)
                )
                listed = await client.list_tools()
        except Exception as exc:  # anything a dead or odd server does
            log.warning(
                "MCP server %s unavailable: %s",
                server.name,
                type(exc).__name__,
                extra={"event": "mcp_server_unavailable", "server": server.name},
            )
            return
        self.tools += [self._tool(server.name, client, t) for t in listed.tools]

    def _tool(self, server: str, client: Client, remote: types.Tool) -> Tool:
        async def run(arguments: OpenArguments) -> ToolOutput:
            return await self._call(server, client, remote.name, arguments.model_dump())

        schema = dict(remote.input_schema or {"type": "object", "properties": {}})
        return Tool(
            tool_name(server, remote.name),
            (remote.description or remote.name)[:300],
            OpenArguments,
            run,
            parameters=schema,
        )

    async def _call(
        self, server: str, client: Client, name: str, arguments: dict[str, Any]
    ) -> ToolOutput:
        try:
            async with asyncio.timeout(self.timeout):
                result = await client.call_tool(name, arguments)
        except TimeoutError:
            raise ToolError(
                f"the {server} server did not answer within {self.timeout:g} s"
            ) from None
        except Exception as exc:
            raise ToolError(f"the {server} server failed ({type(exc).__name__})") from None
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or f"the {server} server refused the call")
        data: Any = result.structured_content if result.structured_content is not None else text
        found = list(dict.fromkeys(_WINE_ID.findall(f"{text} {data}".lower())))
        known = await self.known_wines(found) if found else {}
        return ToolOutput(
            data,
            frozenset(known),
            labels=known,
            text=(text or str(data))[:MAX_RESULT_CHARS],
        )

    async def aclose(self) -> None:
        self._closing.set()
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=self.timeout)
        for task in pending:  # a server that will not stop: its process goes with ours
            task.cancel()
