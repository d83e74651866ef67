"""How the real-model evaluation judges a second conversation against the first one's taste."""

import pytest

from sommelier.agent.records import AgentResult, AttemptRecord, Level, Outcome, Purpose, Status
from sommelier.chat.service import Card, TurnReply
from sommelier.evaluation.dialogs import Respect
from sommelier.evaluation.report import summarize
from sommelier.evaluation.runner import TurnOutcome, accepted, non_answer, rejected, respects


def card(style: str, place: str, grapes: list[str]) -> Card:
    return Card("x-1", "A wine", None, place, grapes, style, None, None, 0, "why")


def reply(*cards: Card) -> TurnReply:
    return TurnReply("ok", "text", cards=list(cards))


def test_an_avoided_type_or_country_fails_a_reply_that_shows_one() -> None:
    white = card("white, dry", "Mosel, Germany", ["Riesling"])
    red = card("red, dry, full body", "Mendoza, Argentina", ["Malbec"])
    assert respects(reply(white), Respect(avoid=("type", "red")))
    assert not respects(reply(white, red), Respect(avoid=("type", "red")))
    assert not respects(
        reply(card("sparkling", "Champagne, France", [])), Respect(avoid=("country", "france"))
    )


def test_a_like_needs_one_matching_wine_and_no_wine_is_a_miss() -> None:
    riesling = card("white, off-dry", "Alsace, France", ["Riesling"])
    assert respects(reply(riesling), Respect(like=("grape", "riesling")))
    assert not respects(
        reply(card("white", "Rueda, Spain", ["Verdejo"])), Respect(like=("grape", "riesling"))
    )
    assert not respects(reply(), Respect(avoid=("type", "red")))
    assert not respects(TurnReply("error", "sorry"), Respect(avoid=("type", "red")))


def test_the_summary_counts_only_judged_turns() -> None:
    def outcome(judged: bool | None) -> TurnOutcome:
        return TurnOutcome(
            0, "t", True, "ok", True, "first try", 0, None, 1, None, 1.0, None, respects=judged
        )

    summary = summarize("json/planner", [outcome(None), outcome(True), outcome(False)])
    assert (summary.profile_respected, summary.profile_judged) == (1, 2)
    assert ("second conversations that respect the first's taste", "1/2 (50%)") in summary.rows()


def test_every_set_is_run_in_full_and_each_alone() -> None:
    from sommelier.evaluation.cli import SETS, choose_dialogs
    from sommelier.i18n.languages import COVERED

    everything = choose_dialogs(False, False, False, None)
    assert len(everything) == sum(len(dialogs) for dialogs in SETS.values())
    assert choose_dialogs(False, False, True, None) == everything[len(SETS["english"]) :]
    assert choose_dialogs(False, False, False, 2, "unseen") == SETS["unseen"][:2]
    # Each set past the English one covers the eight languages, and every turn is judged.
    for name in SETS.keys() - {"english"}:
        turns = [say for dialog in SETS[name] for say in dialog]
        assert {say.language for say in turns} == set(COVERED), name
        assert all(say.expect is not None for say in turns), name


def test_an_outcome_keeps_the_answers_that_were_sent_back() -> None:
    """A reset must be explainable after the run: the answers the runtime rejected, and why,
    are in the outcome (and so in `--output`); the plan and a good answer are not."""

    def call(
        purpose: Purpose, outcome: Outcome, output: str, error: str | None = None
    ) -> AttemptRecord:
        record = AttemptRecord(1, purpose, Level.first, "m", 0, 0, 0, [], output=output)
        record.outcome, record.error_kind, record.error_message = outcome, "semantic", error
        return record

    echo = 'Und ein süßer Wein dazu?\n---\n{"wines": [], "guard": "prompt_injection"}'
    result = AgentResult(
        Status.reset,
        attempts=[
            call(Purpose.plan, Outcome.planned, '{"goal": "sweet wine"}'),
            call(Purpose.answer, Outcome.invalid, echo, "the intro only repeats my message"),
            call(Purpose.repair, Outcome.ok, "Hier ist ein süßer Wein."),
        ],
    )
    kept = rejected(result)
    assert len(kept) == 1
    assert kept[0].startswith("semantic: the intro only repeats my message")
    assert '"guard": "prompt_injection"' in kept[0]
    # The answer shown is kept as the model wrote it, before any mend.
    assert accepted(result) == "Hier ist ein süßer Wein."


def test_a_repeat_is_the_same_text_above_the_same_wines() -> None:
    """The plain line above a cheaper wine answers "something cheaper?"; it is judged a
    repeat only when the wines are the same as the reply before."""
    line = "Ecco cosa ho trovato nel catalogo."

    def shown(wine_id: str) -> TurnReply:
        wine = Card(
            wine_id, "A wine", None, "Soave, Italy", ["Garganega"], "white", None, None, 0, ""
        )
        return TurnReply("ok", line, cards=[wine])

    before, cheaper, same = shown("sm-001"), shown("sm-002"), shown("sm-001")
    assert non_answer(cheaper, before) is None
    assert non_answer(same, before) == "repeats the previous reply"


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Вот что мне нужно сказать:\n\nЧто вы хотите узнать о хранении вина?", "asks back"),
        ("Was möchtest du wissen? Frag mich gern.", None),  # it says something too
        ("Ja, liegend: der Korken bleibt feucht. Noch Fragen?", None),
    ],
)
def test_a_question_answered_only_with_a_question_is_no_answer(
    text: str, verdict: str | None
) -> None:
    found = non_answer(TurnReply("ok", text), None, "Правда, что вино нужно хранить лёжа?", False)
    assert (found or "").startswith(verdict or "") and (found is None) == (verdict is None)
    # A wine request may fairly ask what it is for: not judged so.
    assert non_answer(TurnReply("ok", text), None, "A red wine", True) is None
