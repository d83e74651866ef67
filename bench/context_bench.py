"""Context-window figures over a 60-turn conversation: prompt tokens sent per turn with fitting
versus the full history, and the time the fitting itself takes per call (median, p95).

    .venv/bin/python bench/context_bench.py [--turns 60] [--window 4096]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import percentiles, report  # noqa: E402

from sommelier.agent.context import EstimatingCounter, TokenBudgets, fit_messages  # noqa: E402
from sommelier.agent.messages import assistant, system, tool_result, user  # noqa: E402
from sommelier.catalog.tools import catalog_tools  # noqa: E402
from sommelier.chat.prompts import system_prompt  # noqa: E402

# A search result as the model reads it: one plain line per wine (catalog/tools.py).
SEARCH_RESULT = "Wines from the catalog that match:\n" + "\n".join(
    f"- sm-{i:03}: Wine {i} by Producer {i} from Rioja, Spain; red, dry, medium body, "
    f"Tempranillo, 19.00 EUR, rated 3.9. Ripe plum, vanilla and a soft finish."
    for i in range(4)
)


def turn_messages(i: int) -> list:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "search_wines", "arguments": '{"type":"red"}'},
    }
    return [
        user(f"Turn {i}: something like the last one but a bit cheaper, maybe from Spain?"),
        assistant("", [call]),
        tool_result(f"c{i}", SEARCH_RESULT),
        assistant(
            '{"response_type":"recommendation","intro":"Here are three Spanish reds '
            'that fit.","wines":[{"wine_id":"sm-001","why":"Ripe, soft and good value."}],'
            '"closing":"Cheaper still?","guard":null}'
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument("--output-tokens", type=int, default=512)
    args = parser.parse_args()
    counter = EstimatingCounter()
    tools = catalog_tools(None).specs()  # type: ignore[arg-type]
    budget = TokenBudgets(args.window, counter).prompt_budget(tools, args.output_tokens)
    history = [system(system_prompt())]
    full_sizes, fitted_sizes, fit_ms = [], [], []
    for i in range(args.turns):
        history += turn_messages(i)
        prompt = history[:-1]  # what is sent for the final answer of turn i
        full_sizes.append(counter.count(prompt))
        started = time.perf_counter()
        fitted = fit_messages(prompt, budget, counter)
        fit_ms.append((time.perf_counter() - started) * 1000)
        fitted_sizes.append(counter.count(fitted))
    median, p95 = percentiles(fit_ms)
    report(
        f"{args.turns}-turn conversation, {args.window}-token window, "
        f"{args.output_tokens} reserved for output (estimated tokens)",
        [
            ("message budget per call", f"{budget:,}"),
            ("full history, last turn", f"{full_sizes[-1]:,}"),
            ("fitted, last turn", f"{fitted_sizes[-1]:,}"),
            ("full history, mean per turn", f"{statistics.mean(full_sizes):,.0f}"),
            ("fitted, mean per turn", f"{statistics.mean(fitted_sizes):,.0f}"),
            ("full history, total over all turns", f"{sum(full_sizes):,}"),
            ("fitted, total over all turns", f"{sum(fitted_sizes):,}"),
            (
                "turns over the window without fitting",
                str(sum(1 for s in full_sizes if s > budget)),
            ),
            ("turns over the window with fitting", str(sum(1 for s in fitted_sizes if s > budget))),
            ("fitting time median ms", f"{median:.3f}"),
            ("fitting time p95 ms", f"{p95:.3f}"),
        ],
    )


if __name__ == "__main__":
    main()
