"""`sommelier mcp serve`: the catalog's `search_wines` and `get_wine` for any MCP client, over
stdio or streamable HTTP on 127.0.0.1, with the agent's own schemas and limits."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from sommelier.agent.text import clean_value
from sommelier.agent.tools import Tool, ToolError, ToolRegistry, compact_json

log = logging.getLogger("sommelier.mcp")

NAME = "sommelier-catalog"
MAX_ARGUMENT_CHARS = 4096  # a search is a few words: more is refused, never echoed back
MAX_BODY_BYTES = 65_536  # an HTTP request body past this is refused before it is read


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


async def call(tool: Tool, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call; bad arguments and tool errors are MCP tool errors, never a crash. The
    arguments are checked at this boundary as the agent's are: no NUL or control characters
    reach the database, and oversized ones are refused without being repeated."""
    size = len(compact_json(arguments))
    if size > MAX_ARGUMENT_CHARS:
        return _error(f"the arguments are {size} characters long; at most {MAX_ARGUMENT_CHARS}")
    try:
        parsed = tool.arguments.model_validate(clean_value(arguments))
        output = await tool.run(parsed)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        return _error(f"invalid arguments: {problems}")
    except ToolError as exc:
        return _error(str(exc))
    text = output.text if output.text is not None else compact_json(output.data)
    data = output.data if isinstance(output.data, dict) else {"result": output.data}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=data
    )


def catalog_server(registry: ToolRegistry) -> Server[Any]:
    """An MCP server offering the registry's tools with the schemas the agent sends models."""
    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.schema())
        for t in registry.tools.values()
    ]

    async def list_tools(
        _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        _: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = registry.tools.get(params.name)
        if tool is None:
            return _error(f"unknown tool {params.name!r}; available: {', '.join(registry.tools)}")
        return await call(tool, dict(params.arguments or {}))

    return Server(NAME, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], port: int) -> None:
    """Streamable HTTP on 127.0.0.1:<port>/mcp (DNS-rebinding protection on: localhost only)."""
    import uvicorn

    app = limited(server.streamable_http_app(host="127.0.0.1"), MAX_BODY_BYTES)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()


ASGIApp = Callable[[dict[str, Any], Callable[..., Any], Callable[..., Any]], Awaitable[None]]


def limited(app: ASGIApp, max_bytes: int) -> ASGIApp:
    """`app` behind a body-size limit: a request that says (Content-Length) or turns out to be
    larger is answered 413 without being read to the end."""

    async def guarded(
        scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > max_bytes:
            await _too_large(send)
            return
        seen = 0

        async def counted() -> dict[str, Any]:
            nonlocal seen
            message: dict[str, Any] = await receive()
            seen += len(message.get("body", b""))
            if seen > max_bytes:
                raise _TooLarge
            return message

        try:
            await app(scope, counted, send)
        except _TooLarge:
            await _too_large(send)

    return guarded


class _TooLarge(Exception):
    pass


async def _too_large(send: Callable[..., Any]) -> None:
    body = b"request body too large"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
