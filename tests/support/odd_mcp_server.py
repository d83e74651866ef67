"""An MCP server (stdio) that misbehaves on purpose, for the agent's MCP client tests.

`python -m tests.support.odd_mcp_server hang`: its tool never answers.
`python -m tests.support.odd_mcp_server junk`: its tool answers with no text, an image and ids,
one of which (zz-999) is in no catalog.
`python -m tests.support.odd_mcp_server garbage`: writes non-protocol bytes and exits.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(
    name="cellar",
    description="what is in my own cellar",
    input_schema={
        "type": "object",
        "properties": {"shelf": {"type": "integer"}},
        "required": ["shelf"],
    },
)


async def list_tools(_: ServerRequestContext[Any], __: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(
    _: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    mode = sys.argv[1]
    if mode == "hang":
        await asyncio.sleep(3600)
    if not isinstance((params.arguments or {}).get("shelf"), int):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="shelf must be a number")], is_error=True
        )
    return types.CallToolResult(
        content=[types.ImageContent(type="image", data="AAAA", mime_type="image/png")],
        structured_content={"bottles": ["sm-059", "zz-999"], "note": None},
    )


async def main() -> None:
    if sys.argv[1] == "garbage":
        sys.stdout.write("this is not JSON-RPC\n")
        sys.stdout.flush()
        return
    server = Server("odd", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
