"""The schedule of the cellar's follow-ups: every ten seconds, the due "how was it?" questions after
an opened bottle (bot/opened.py) and the due weekly reminders (bot/cellar.py) are sent. Where the
queue runs (SOMMELIER_TELEGRAM_QUEUE), a procrastinate periodic task does it in whichever worker
takes it (bot/queue.py); otherwise python-telegram-bot's JobQueue in the one process. Either way
they are rows taken one by one (cellar/opened.py, cellar/reminders.py), so a restart or several
processes neither lose nor repeat one.
"""

from __future__ import annotations

import logging

from telegram import Bot
from telegram.ext import Application, ContextTypes

from sommelier.bot.handlers import SommelierBot
from sommelier.db.session import DATABASE_ERRORS

log = logging.getLogger("sommelier.bot")

# Seconds between rounds: a round is two indexed reads when nothing is due; a question asked
# up to this late is on time for "the next day".
ASK_EVERY = 10.0
ASK_CRON = "* * * * * */10"  # the same for procrastinate (cron with seconds)


async def follow_ups(sommelier: SommelierBot, bot: Bot) -> None:
    """One round; a database that is away waits for the next."""
    try:
        await sommelier.opened.send_due(bot)
        await sommelier.cellars.remind_due(bot)
    except DATABASE_ERRORS as exc:
        log.warning("cellar follow-ups not sent: %s", exc, extra={"event": "cellar_ask_failed"})


def schedule(application: Application, sommelier: SommelierBot, every: float = ASK_EVERY) -> None:
    """A round every `every` seconds with PTB's JobQueue (the job-queue extra)."""
    jobs = application.job_queue
    if jobs is None:  # PTB without APScheduler: said once, the bot runs without the questions
        log.warning("no JobQueue: cellar questions are not asked", extra={"event": "no_job_queue"})
        return

    async def run(context: ContextTypes.DEFAULT_TYPE) -> None:
        await follow_ups(sommelier, context.bot)

    jobs.run_repeating(run, interval=every, first=every, name="cellar_asks")
