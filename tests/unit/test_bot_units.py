"""Per-chat ordering and the per-user rate limit, without Telegram."""

import asyncio

from telegram import Chat, Message, Update, User

from sommelier.bot.limits import RateLimiter
from sommelier.bot.ordering import PerChatUpdateProcessor


def update(update_id: int, chat_id: int) -> Update:
    chat = Chat(chat_id, "private")
    user = User(chat_id, "X", is_bot=False)
    import datetime as dt

    return Update(
        update_id,
        message=Message(update_id, dt.datetime.now(dt.UTC), chat, from_user=user, text="x"),
    )


async def test_updates_of_one_chat_run_in_order_and_chats_run_concurrently() -> None:
    processor = PerChatUpdateProcessor(16)
    log: list[str] = []

    async def work(name: str, delay: float) -> None:
        log.append(f"start {name}")
        await asyncio.sleep(delay)
        log.append(f"end {name}")

    await asyncio.gather(
        processor.process_update(update(1, 10), work("a1", 0.2)),
        processor.process_update(update(2, 10), work("a2", 0.0)),
        processor.process_update(update(3, 20), work("b1", 0.05)),
    )
    assert log.index("end a1") < log.index("start a2")  # same chat: strictly in order
    assert log.index("end b1") < log.index("end a1")  # other chat: not held up


def test_rate_limit_window() -> None:
    now = [0.0]
    limiter = RateLimiter(2, clock=lambda: now[0])
    assert limiter.check(1) == 0 and limiter.check(1) == 0
    assert 59 < limiter.check(1) <= 60  # third message in the minute: wait
    assert limiter.check(2) == 0  # other people are not affected
    now[0] = 60.5
    assert limiter.check(1) == 0


def test_the_rate_limiter_forgets_people_who_went_quiet() -> None:
    from sommelier.bot.limits import EVICT_EVERY, RateLimiter

    now = [0.0]
    limiter = RateLimiter(5, clock=lambda: now[0])
    for user in range(1000):
        limiter.check(user)
    assert limiter.tracked == 1000
    now[0] = 61.0  # a minute of silence from all of them
    for _ in range(EVICT_EVERY):
        limiter.check(1)
    assert limiter.tracked == 1  # only the one still writing


def test_the_cellars_button_numbers_are_row_ids_or_nothing() -> None:
    """A forged press of "Opened" or a star never reaches the database with a number no row
    can have (2^31 fails PostgreSQL's integer)."""
    from sommelier.bot.signing import numbers as _numbers

    assert _numbers("o:12:1") == (12, 1)
    assert _numbers("st:2147483648:4") == (None, 4)
    assert _numbers("st:1") == (None, None) and _numbers("st:a:b:c") == (None, None)
