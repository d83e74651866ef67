"""The terminal shows answers live and replaces a discarded attempt cleanly."""

import io

from rich.console import Console

from sommelier.agent.parsers import Discard, TextDelta
from sommelier.chat.service import TurnReply
from sommelier.terminal import LiveAnswer, render


def terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=80, color_system=None), out


def test_text_appears_live_and_a_discard_replaces_it() -> None:
    console, out = terminal()
    with LiveAnswer(console) as live:
        live.emit(TextDelta("A wrong "))
        live.emit(TextDelta("start"))
        assert "A wrong start" in out.getvalue()  # visible before the turn ends
        live.emit(Discard("repair"))
        assert live.shown == ""
        live.emit(TextDelta("The right answer."))
    assert live.shown == "The right answer."


def test_interrupted_turn_keeps_what_was_shown_and_offers_retry() -> None:
    console, out = terminal()
    render(console, TurnReply("interrupted", "The connection broke off."), kept="Two reds for")
    printed = out.getvalue()
    assert "Two reds for" in printed and "/retry" in printed
