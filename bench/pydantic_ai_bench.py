"""A whole Sommelier turn against a PydanticAI agent turn doing the same agent work, interleaved.

.venv/bin/pip install -e '.[bench]' && .venv/bin/python bench/pydantic_ai_bench.py [--turns 400]

Both get the same request and a scripted model with no latency: one tool round (a search for a
red under 20 euros for steak), then a structured answer that is validated and grounded (every
wine id must come from the tool result). PydanticAI's tool returns the 60 starter wines from
memory and keeps no history. Sommelier's turn is the real `ChatService.turn` on SQLite: it
also searches the catalog in SQL, stores the exchange, the model calls and the inbound status,
and reads the person's history and taste. Blocks of turns alternate (A B A B ...), so a change in
the machine's state affects both sides alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import fresh_app, report, run  # noqa: E402
from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from sqlalchemy import select  # noqa: E402

from sommelier.agent.messages import wire  # noqa: E402
from sommelier.agent.model import Completion, ModelRequest  # noqa: E402
from sommelier.catalog.search import summarize  # noqa: E402
from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from sommelier.chat.answer import Reply  # noqa: E402
from sommelier.db.models import Wine  # noqa: E402
from sommelier.db.repositories import Person  # noqa: E402
from tests.support.scripted import ScriptedModel, answer, reply, tools  # noqa: E402

REQUEST = "a red under 20 euros for steak"
SEARCH = {"type": "red", "max_price": 20, "food": "steak"}
PICK = "sm-059"


class OneRoundModel(ScriptedModel):
    """Stateless: a search, then (with the search's result in the transcript) the answer, as
    PydanticAI's script does. Searching whenever tools are offered would make every turn run
    the loop's five tool rounds."""

    def __init__(self) -> None:
        super().__init__([])
        self.turns = 0

    async def complete(self, request: ModelRequest, on_delta: Any = None) -> Completion:
        messages = [wire(m) for m in request.messages]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        searched = any(m["role"] == "tool" for m in messages[last_user:])
        if request.tools and not searched:
            return tools(("search_wines", SEARCH))
        self.turns += 1  # a fresh intro each turn: a reply repeated word for word is refused
        return answer(reply([PICK], intro=f"Turn {self.turns}: the Catena."))


def pydantic_agent(catalog: list[dict[str, Any]]) -> Agent[None, Reply]:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("search_wines", SEARCH)])
        final = reply([PICK], intro="The Catena.")
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, final)])

    agent: Agent[None, Reply] = Agent(FunctionModel(script), output_type=Reply)
    returned: set[str] = set()

    @agent.tool_plain
    def search_wines(type: str, max_price: float, food: str) -> str:
        returned.update(w["id"] for w in catalog)
        return json.dumps(catalog)

    @agent.output_validator
    def grounded(output: Reply) -> Reply:
        unknown = [w.wine_id for w in output.wines if w.wine_id not in returned]
        if unknown:
            raise ModelRetry(f"wine ids not in the tool results: {unknown}")
        return output

    return agent


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=400, help="per side, in blocks of 50")
    args = parser.parse_args()
    async with fresh_app("sqlite", agent_strategy="native") as app:
        await load_starter_catalog_if_empty(app.sessions)
        async with app.sessions() as session:
            wines = (await session.scalars(select(Wine))).all()
        catalog = [summarize(w).model_dump(exclude_none=True) for w in wines]
        theirs = pydantic_agent(catalog)
        service = app.chat_service(OneRoundModel())
        people = [Person(channel="cli", local_name=f"p{i}") for i in range(20)]
        for person in people:  # first turns create the people: not what is measured
            assert (await service.turn(person, REQUEST)).ok
        ours_ms: list[float] = []
        theirs_ms: list[float] = []
        for _ in range(max(1, args.turns // 50)):
            for i in range(50):
                started = time.perf_counter()
                result = await service.turn(people[i % 20], REQUEST)
                ours_ms.append((time.perf_counter() - started) * 1000)
                assert result.ok and result.cards[0].wine_id == PICK
            for _ in range(50):
                started = time.perf_counter()
                run_result = await theirs.run(REQUEST)
                theirs_ms.append((time.perf_counter() - started) * 1000)
                assert run_result.output.wines[0].wine_id == PICK
        ours, theirs_median = statistics.median(ours_ms), statistics.median(theirs_ms)
        report(
            "one tool round + a validated, grounded answer, scripted model (SQLite)",
            [
                ("Sommelier whole turn, median ms", f"{ours:.2f}"),
                ("PydanticAI agent turn, median ms", f"{theirs_median:.2f}"),
                ("ratio (goal <= 1)", f"{ours / theirs_median:.2f}"),
                ("turns per side", str(len(ours_ms))),
            ],
        )


if __name__ == "__main__":
    run(main)
