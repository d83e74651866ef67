"""The fault matrix as a report: for each way a model server misbehaves, what the person saw
and what the tables hold (inbound status; model_calls purpose/outcome/error kind).

    .venv/bin/python bench/fault_matrix.py [--databases sqlite,postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import fresh_app

from sommelier.catalog.starter import load_starter_catalog_if_empty
from tests.support.fake_openai import FakeOpenAI
from tests.support.faults import FAULTS, run_fault


async def matrix(kind: str) -> None:
    print(f"\nFault matrix on {kind}")
    print(f"{'fault':34} {'person sees':58} {'inbound':12} model_calls")
    for fault in FAULTS:
        async with fresh_app(kind) as app:
            await load_starter_catalog_if_empty(app.sessions)
            outcome = await run_fault(app, fault, lambda: FakeOpenAI().start())
        seen = outcome.reply.text.replace("\n", " ")[:56]
        calls = ", ".join("/".join(x for x in call if x) for call in outcome.calls)
        print(f"{fault.name:34} {seen:58} {','.join(outcome.inbound):12} {calls}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    for kind in args.databases.split(","):
        asyncio.run(matrix(kind))


if __name__ == "__main__":
    main()
