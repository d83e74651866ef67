"""One list of what can become of a message a person sent (db/turns.py `InboundStatus`): every
way a turn ends is one of them, and the admin's daily view puts each in exactly one column."""

from sommelier.agent.records import Status
from sommelier.db.admin_views import ANSWERED, NO_ANSWER, TURNED_AWAY
from sommelier.db.turns import RETRY, RUN_AGAIN, InboundStatus


def test_every_way_a_turn_ends_is_an_inbound_status() -> None:
    assert {str(s) for s in Status} <= {str(s) for s in InboundStatus}


def test_the_daily_view_counts_every_status_once() -> None:
    columns = [*ANSWERED, *NO_ANSWER, *TURNED_AWAY, InboundStatus.received]
    assert sorted(columns) == sorted(InboundStatus)


def test_only_turns_that_gave_no_answer_run_again_or_are_offered_again() -> None:
    assert set(RUN_AGAIN) <= {*NO_ANSWER, InboundStatus.received}
    assert set(RETRY) <= set(NO_ANSWER)
    assert not set(RUN_AGAIN) & set(RETRY)  # a retried message is a new one, not a redelivery
