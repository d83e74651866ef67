"""`sommelier model check`: what an OpenAI-compatible endpoint and model actually do.

Each check sends one small request and looks at what came back, trusting no 200: a schema is
"enforced" only when the answer follows a schema no free model would follow by chance. Checks
go out without the SDK's retries, so a rejection shows as what it is.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx2
import openai

from sommelier.agent.profile import EndpointProfile, Support

# Values no model writes unless something makes it.
CODE, COLOUR = "QX7-PLUM-41", "ultraviolet-gray"
PROBE_SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "enum": [CODE]},
        "colour": {"type": "string", "enum": [COLOUR]},
        "note": {"type": "string", "maxLength": 20},
    },
    "required": ["code", "colour", "note"],
    "additionalProperties": False,
}
GRAMMAR = 'root ::= "PINEAPPLE-" [0-9] [0-9]'
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
SPEED_TEXT = " ".join(
    f"Bottle {i} comes from vineyard {i} and tastes of plum, cherry and spice." for i in range(24)
)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    result: str
    ok: bool | None  # None: informational


Progress = Callable[[str], None]
INTERRUPT_FIX = (
    "the server cuts a running answer when another request arrives; for llama-cpp-python's "
    "server start it with --interrupt_requests False"
)


class Prober:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        progress: Progress | None = None,
    ) -> None:
        self.base_url = base_url
        self.root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
        self.model = model
        self.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", max_retries=0, timeout=timeout
        )
        self.checks: list[Check] = []
        self.progress = progress or (lambda _: None)

    async def close(self) -> None:
        await self.client.close()

    def note(self, name: str, result: str, ok: bool | None) -> None:
        self.checks.append(Check(name, result, ok))
        mark = {True: "✓", False: "✗", None: "·"}[ok]
        self.progress(f"  {mark} {name}: {result}")

    async def ask(self, content: str, **options: Any) -> Any:
        return await self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "user", "content": content}],
            temperature=0,
            **options,
        )

    async def run(self) -> EndpointProfile:
        profile = await self.reachable()
        if not profile.reachable:
            return profile
        steps: list[tuple[str, Callable[[EndpointProfile], Awaitable[EndpointProfile]]]] = [
            ("json_schema", self.json_schema),
            ("json_object with a schema", self.json_object_schema),
            ("grammar", self.grammar),
            ("tool calls", self.tools),
            ("streaming", self.streaming),
            ("context window and parallel slots", self.server_props),
            ("a second request during an answer", self.interruption),
            ("speed", self.speed),
        ]
        for name, step in steps:
            # A small local model takes seconds per probe: say what is being checked.
            self.progress(f"checking {name}…")
            profile = await step(profile)
        return profile

    async def reachable(self) -> EndpointProfile:
        try:
            response = await self.ask("Say OK.", max_tokens=4)
        except openai.APIError as exc:
            self.note("reachable", f"no: {_why(exc)}", False)
            return EndpointProfile(reachable=False)
        usage = getattr(response, "usage", None) is not None
        self.note("reachable", "yes", True)
        self.note("usage reported", "yes" if usage else "no", usage)
        return EndpointProfile(usage=usage)

    async def _schema(self, name: str, response_format: dict[str, Any]) -> Support:
        try:
            response = await self.ask(
                "Tell me a short joke.", max_tokens=80, response_format=response_format
            )
        except openai.APIError as exc:
            self.note(name, f"rejected ({_why(exc)})", False)
            return Support.rejected
        data = _json(response.choices[0].message.content)
        if data.get("code") == CODE and data.get("colour") == COLOUR:
            self.note(name, "accepted and enforced", True)
            return Support.enforced
        self.note(name, "accepted but ignored (output did not follow it)", False)
        return Support.accepted

    async def json_schema(self, profile: EndpointProfile) -> EndpointProfile:
        schema = {"name": "probe", "schema": PROBE_SCHEMA, "strict": True}
        support = await self._schema("json_schema", {"type": "json_schema", "json_schema": schema})
        return replace(profile, json_schema=support)

    async def json_object_schema(self, profile: EndpointProfile) -> EndpointProfile:
        support = await self._schema(
            "json_object with a schema", {"type": "json_object", "schema": PROBE_SCHEMA}
        )
        return replace(profile, json_object_schema=support)

    async def grammar(self, profile: EndpointProfile) -> EndpointProfile:
        name = "grammar (GBNF)"
        try:
            response = await self.ask("Say hello.", max_tokens=12, extra_body={"grammar": GRAMMAR})
        except openai.APIError as exc:
            self.note(name, f"rejected ({_why(exc)})", False)
            return replace(profile, grammar=Support.rejected)
        text = (response.choices[0].message.content or "").strip()
        if re.fullmatch(r"PINEAPPLE-\d\d", text):
            self.note(name, "accepted and enforced", True)
            return replace(profile, grammar=Support.enforced)
        self.note(name, "ignored", False)
        return replace(profile, grammar=Support.accepted)

    async def _tool_call(self, name: str, tool_choice: Any) -> bool:
        try:
            response = await self.ask(
                "What is the weather in Paris right now? Use the tool.",
                max_tokens=60,
                tools=[WEATHER_TOOL],
                tool_choice=tool_choice,
            )
        except openai.APIError as exc:
            self.note(name, f"rejected ({_why(exc)})", False)
            return False
        calls = response.choices[0].message.tool_calls or []
        if calls and calls[0].function.name == "get_weather":
            self.note(name, "real tool_calls", True)
            return True
        text = (response.choices[0].message.content or "").strip()
        shape = "the call written as text" if "get_weather" in text else "no tool call"
        self.note(name, shape, False)
        return False

    async def tools(self, profile: EndpointProfile) -> EndpointProfile:
        auto = await self._tool_call("tool_calls, tool_choice auto", "auto")
        forced = await self._tool_call(
            "tool_calls, tool_choice forced",
            {"type": "function", "function": {"name": "get_weather"}},
        )
        return replace(profile, tools_auto=auto, tools_forced=forced)

    async def streaming(self, profile: EndpointProfile) -> EndpointProfile:
        try:
            stream = await self.ask(
                "Count from 1 to 5.",
                max_tokens=20,
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks, usage, finished = 0, False, False
            async with stream:
                async for chunk in stream:
                    chunks += 1
                    usage = usage or getattr(chunk, "usage", None) is not None
                    finished = finished or any(c.finish_reason for c in chunk.choices or [])
        except (openai.APIError, httpx2.HTTPError) as exc:
            self.note("streaming", f"no ({_why(exc)})", False)
            return replace(profile, streaming=False, stream_usage=False)
        works = chunks > 1 and finished
        self.note("streaming", f"yes ({chunks} chunks)" if works else "no", works)
        self.note("usage reported in streams", "yes" if usage else "no", usage)
        return replace(profile, streaming=works, stream_usage=usage)

    async def server_props(self, profile: EndpointProfile) -> EndpointProfile:
        """llama-server's /props: the context window and how many slots serve at once. A
        server that says nothing serves one request at a time, as far as anyone can tell
        (llama-cpp-python's server; SOMMELIER_LLM_CONCURRENCY overrides)."""
        window, slots = None, None
        try:
            async with httpx2.AsyncClient(timeout=5) as http:
                response = await http.get(f"{self.root}/props")
                if response.status_code == 200:
                    props = response.json()
                    settings = props.get("default_generation_settings", {})
                    window = settings.get("n_ctx") or props.get("n_ctx")
                    slots = props.get("total_slots")
        except (httpx2.HTTPError, ValueError, AttributeError):
            window, slots = None, None
        self.note("context window", f"{window} tokens" if window else "not reported", None)
        said = f"{slots}" if slots else "not reported (taken as 1)"
        self.note("requests served at once", said, None)
        return replace(
            profile,
            context_tokens=int(window) if window else None,
            concurrency=int(slots) if slots else 1,
        )

    async def interruption(self, profile: EndpointProfile) -> EndpointProfile:
        """Two overlapping streamed requests: does the first still finish?"""
        name = "a second request during an answer"
        try:
            first = await self.ask("Count slowly from 1 to 30.", max_tokens=40, stream=True)
            finished, second = False, None
            async with first:
                async for chunk in first:
                    if second is None and chunk.choices and chunk.choices[0].delta.content:
                        second = asyncio.create_task(self.ask("Say OK.", max_tokens=2))
                    finished = finished or any(c.finish_reason for c in chunk.choices or [])
            if second is not None:
                await second
        except (openai.APIError, httpx2.HTTPError) as exc:
            self.note(name, f"not checked ({_why(exc)})", None)
            return profile
        self.note(
            name, "both answered" if finished else f"cut the first: {INTERRUPT_FIX}", finished
        )
        return replace(profile, interrupts=not finished)

    async def speed(self, profile: EndpointProfile) -> EndpointProfile:
        """Prompt and generation tokens per second, on a prompt no cache has seen."""
        prompt = f"[{uuid.uuid4().hex}] {SPEED_TEXT}\nName the first bottle in five words."
        started = time.perf_counter()
        first = None
        pieces = 0
        try:
            response = await self.ask(prompt, max_tokens=24, stream=True)
            async with response:
                async for chunk in response:
                    if chunk.choices and chunk.choices[0].delta.content:
                        first = first or time.perf_counter()
                        pieces += 1
            ended = time.perf_counter()
            counted = await self.ask(prompt, max_tokens=1)  # cached now: only for the count
        except (openai.APIError, httpx2.HTTPError) as exc:
            self.note("speed", f"not measured ({_why(exc)})", None)
            return profile
        prompt_tokens = counted.usage.prompt_tokens if counted.usage else None
        if first is None or not prompt_tokens:
            self.note("speed", "not measured", None)
            return profile
        prompt_tps = prompt_tokens / max(first - started, 1e-3)
        gen_tps = (pieces - 1) / max(ended - first, 1e-3) if pieces > 1 else None
        self.note("prompt tokens per second", f"{prompt_tps:.0f}", None)
        self.note("generation tokens per second", f"{gen_tps:.1f}" if gen_tps else "?", None)
        return replace(
            profile,
            prompt_tokens_per_second=round(prompt_tps, 1),
            generation_tokens_per_second=round(gen_tps, 1) if gen_tps else None,
        )


def _json(text: str | None) -> dict[str, Any]:
    try:
        data = json.loads(text or "")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _why(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    if status:
        return f"HTTP {status}"
    return type(exc).__name__


async def probe(
    base_url: str, api_key: str, model: str, read_timeout: float, progress: Progress | None = None
) -> tuple[EndpointProfile, list[Check]]:
    prober = Prober(base_url, api_key, model, read_timeout, progress)
    try:
        profile = await prober.run()
    finally:
        await prober.close()
    return profile, prober.checks
