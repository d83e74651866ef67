"""`sommelier mcp serve`: the catalog for any MCP client, over stdio or streamable HTTP on
127.0.0.1: the agent's `search_wines` and `get_wine` tools with their own schemas and limits, a
`wine://{id}` resource (a wine's catalog row as JSON), and a `pair` prompt (a dish in, the
sommelier's question out); with `--cellar-of`, one person's cellar as a read-only tool and a
fixed resource. The low-level server checks no arguments: each is validated here,
with the agent's models, into an error the calling model can read."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sommelier.agent.text import clean_value
from sommelier.agent.tools import Tool, ToolError, ToolRegistry, compact_json

log = logging.getLogger("sommelier.mcp")

NAME = "sommelier-catalog"
MAX_ARGUMENT_CHARS = 4096  # a search is a few words: more is refused, never echoed back
MAX_BODY_BYTES = 65_536  # an HTTP request body past this is refused before it is read
WINE_URI = "wine://{id}"
JSON = "application/json"
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for a resource that does not exist
# The tool and prompt lists never change while a server runs; a wine's row changes only when
# the catalog is imported again.
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    "tools/list": CacheHint(ttl_ms=3_600_000, scope="public"),
    "prompts/list": CacheHint(ttl_ms=3_600_000, scope="public"),
    "resources/templates/list": CacheHint(ttl_ms=3_600_000, scope="public"),
    "resources/read": CacheHint(ttl_ms=300_000, scope="public"),
}


class PairArgs(BaseModel):
    """The `pair` prompt's arguments (MCP passes every argument as a string)."""

    model_config = ConfigDict(extra="forbid")

    dish: str = Field(min_length=2, max_length=200)
    budget: float | None = Field(default=None, gt=0, le=100_000)


class WineUri(BaseModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
    )


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
        return _error(f"invalid arguments: {_problems(exc)}")
    except ToolError as exc:
        return _error(str(exc))
    text = output.text if output.text is not None else compact_json(output.data)
    data = output.data if isinstance(output.data, dict) else {"result": output.data}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=data
    )


def catalog_server(
    registry: ToolRegistry, resources: Mapping[str, Tool] | None = None
) -> Server[Any]:
    """An MCP server offering the registry's tools with the schemas the agent sends models, a
    wine's row as a resource, and the `pair` prompt; `resources`: fixed resources by URI, each
    read as its tool's output with no arguments (a configured person's cellar)."""
    fixed = dict(resources or {})
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

    list_resources, read_resource = _resources(fixed, registry.tools["get_wine"])

    return Server(
        NAME,
        cache_hints=CACHE_HINTS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=_list_templates,
        on_read_resource=read_resource,
        on_list_prompts=_list_prompts,
        on_get_prompt=_get_prompt,
    )


def _resources(fixed: Mapping[str, Tool], get_wine: Tool) -> tuple[Any, Any]:
    """The resource handlers: the fixed resources listed and read by their tools; a wine read
    by its template."""

    async def list_resources(
        _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # A catalog can hold 100,000 wines: they are read by template, not listed.
        listed = [
            types.Resource(name=t.name, uri=uri, description=t.description, mime_type=JSON)
            for uri, t in fixed.items()
        ]
        return types.ListResourcesResult(resources=listed)

    async def read_resource(
        _: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri in fixed:
            output = await fixed[uri].run(fixed[uri].arguments())
            text = compact_json(output.data)
            contents = types.TextResourceContents(uri=uri, mime_type=JSON, text=text)
            return types.ReadResourceResult(contents=[contents])
        return await read_wine(get_wine, uri)

    return list_resources, read_resource


async def _list_templates(
    _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        name="wine",
        uri_template=WINE_URI,
        description="One wine's catalog row (name, producer, place, grapes, price, rating) by "
        "the id search_wines returns.",
        mime_type="application/json",
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_wine(get_wine: Tool, uri: str) -> types.ReadResourceResult:
    """wine://sm-059 → that wine's details, as get_wine gives them."""
    scheme, _, wine_id = uri.partition("://")
    try:
        if scheme != "wine":
            raise ValueError(f"unknown resource {uri!r}; wines are {WINE_URI}")
        checked = WineUri(id=wine_id)
    except (ValueError, ValidationError) as exc:
        message = _problems(exc) if isinstance(exc, ValidationError) else str(exc)
        raise MCPError(types.INVALID_PARAMS, message) from None
    output = await get_wine.run(get_wine.arguments.model_validate({"ids": [checked.id]}))
    wines = output.data.get("wines") if isinstance(output.data, dict) else None
    if not wines:
        raise MCPError(RESOURCE_NOT_FOUND, f"no wine {checked.id!r} in the catalog")
    text = compact_json(wines[0])
    contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=text)
    return types.ReadResourceResult(contents=[contents])


PAIR = types.Prompt(
    name="pair",
    description="Ask the sommelier which wine from the catalog goes with a dish.",
    arguments=[
        types.PromptArgument(name="dish", description="What is being eaten.", required=True),
        types.PromptArgument(
            name="budget", description="Most to spend on the bottle (a number).", required=False
        ),
    ],
)


async def _list_prompts(
    _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[PAIR])


async def _get_prompt(
    _: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    if params.name != PAIR.name:
        raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; available: pair")
    try:
        args = PairArgs.model_validate(clean_value(dict(params.arguments or {})))
    except ValidationError as exc:
        raise MCPError(types.INVALID_PARAMS, f"invalid arguments: {_problems(exc)}") from None
    budget = f", at most {args.budget:g} a bottle" if args.budget else ""
    question = (
        f"I'm having {args.dish}. Which wine from the catalog would you pour{budget}? Search "
        f"with search_wines (food: {args.dish!r}"
        + (f", max_price: {args.budget:g}" if args.budget else "")
        + "), then recommend one or two of the wines it returns, each with a sentence on why "
        "it fits the dish."
    )
    message = types.PromptMessage(
        role="user", content=types.TextContent(type="text", text=question)
    )
    return types.GetPromptResult(description=f"A wine for {args.dish}", messages=[message])


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
