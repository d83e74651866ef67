"""Model calls written to SQL as they finish, not only when the turn ends: a turn cut short (a
killed process, a database that went away mid-turn) still shows the calls it made."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from sommelier.agent.messages import Message
from sommelier.agent.model import ToolCall
from sommelier.agent.observer import TurnObserver
from sommelier.agent.records import AttemptRecord
from sommelier.agent.tools import ToolResult
from sommelier.db.turns import TurnStore

log = logging.getLogger("sommelier.chat")

CallRow = Callable[[AttemptRecord], dict[str, Any]]


class CallRecorder:
    """A TurnObserver that passes every hook on (to the trace) and writes each finished model
    call in a transaction of its own, in the background so the turn never waits for it."""

    def __init__(self, inner: TurnObserver, store: TurnStore, row: CallRow) -> None:
        self.inner = inner
        self.store = store
        self.row = row
        self._writes: dict[int, asyncio.Task[bool]] = {}
        # Each write waits for the one before: the rows keep the calls' order (ids ascending).
        self._last: asyncio.Task[bool] | None = None

    def model_started(self, attempt: int, level: int, model: str, messages: list[Message]) -> Any:
        return self.inner.model_started(attempt, level, model, messages)

    def model_finished(self, handle: Any, record: AttemptRecord) -> None:
        self.inner.model_finished(handle, record)
        if record.attempt not in self._writes:
            after = self._last
            write = self._write(self.row(record), after)
            self._last = asyncio.get_running_loop().create_task(write)
            self._writes[record.attempt] = self._last

    def tool_started(self, call: ToolCall) -> Any:
        return self.inner.tool_started(call)

    def tool_finished(self, handle: Any, result: ToolResult) -> None:
        self.inner.tool_finished(handle, result)

    async def _write(self, row: dict[str, Any], after: asyncio.Task[bool] | None) -> bool:
        if after is not None:
            await asyncio.wait([after])
        try:
            await self.store.record_call(row)
        except Exception as exc:  # kept for the turn's end, which writes it with the rest
            log.warning(
                "model call not recorded yet: %s",
                exc,
                extra={"event": "model_call_deferred", "turn_id": row.get("turn_id")},
            )
            return False
        return True

    async def unwritten(self, attempts: Sequence[AttemptRecord]) -> list[dict[str, Any]]:
        """The turn's calls not in SQL yet (a write failed, or the call never finished), once
        the writes under way are done."""
        if self._writes:
            await asyncio.wait(self._writes.values())
        written = {n for n, task in self._writes.items() if not task.cancelled() and task.result()}
        return [self.row(record) for record in attempts if record.attempt not in written]
