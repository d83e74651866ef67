"""`sommelier mcp serve`: the catalog's `search_wines` and `get_wine` for any MCP client, over
stdio or streamable HTTP on 127.0.0.1, with the agent's own schemas and limits."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from sommelier.agent.tools import Tool, ToolError, ToolRegistry, compact_json

log = logging.getLogger("sommelier.mcp")

NAME = "sommelier-catalog"


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


async def call(tool: Tool, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call; bad arguments and tool errors are MCP tool errors, never a crash."""
    try:
        parsed = tool.arguments.model_validate(arguments)
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

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()
