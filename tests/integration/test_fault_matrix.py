"""The fault matrix, on SQLite and PostgreSQL: whatever the model server does, the turn ends
with a reply or a friendly message, the inbound row has a final status, and every model call
made is a row."""

import pytest

from sommelier.chat.service import FRIENDLY
from tests.support.fake_openai import FakeOpenAI
from tests.support.faults import FAULTS, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_every_fault_ends_the_turn_cleanly(app, fault) -> None:  # type: ignore[no-untyped-def]
    outcome = await run_fault(app, fault, lambda: FakeOpenAI().start())
    reply = outcome.reply
    if fault.expect == "error":
        # No model answered: the wine request is answered from the catalog alone, and says so.
        assert reply.ok and reply.cards and reply.notice.startswith("No model is answering")
        assert outcome.inbound == ["ok"]
        assert outcome.calls[-1][1] == "error" and outcome.calls[-1][2] is not None
        return
    assert reply.status == fault.expect, reply.text
    if fault.expect == "ok":
        assert reply.cards[0].name == "Catena Malbec"
        assert "\x00" not in reply.text and "\x00" not in reply.intro
        # Nothing the model wrote reaches a terminal as a control sequence (OSC 52 would
        # write the clipboard), neither streamed nor stored.
        assert not any(c in text for text in (reply.text, outcome.shown) for c in "\x1b\x07")
    else:
        assert reply.text == FRIENDLY[fault.expect]
    assert outcome.inbound == [fault.expect]  # never left "received"
    assert outcome.calls, "every model call is stored, failed ones too"
    if fault.expect == "interrupted":
        assert outcome.calls[-1][1] == "error" and outcome.calls[-1][2] is not None
