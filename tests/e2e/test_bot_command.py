"""`sommelier start` with a bot token: the README's run command, against the emulator."""

import asyncio
import os
import signal
import sys
from pathlib import Path

from tests.support.telegram import TelegramUser, new_token


async def test_start_runs_the_bot_which_answers_start(tmp_path: Path, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update(
        {
            "SOMMELIER_TELEGRAM_BOT_TOKEN": token,
            "SOMMELIER_TELEGRAM_BASE_URL": telegram_emulator.url,
        }
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sommelier.cli", "start", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        user = TelegramUser(telegram_emulator, token, 4001)
        await user.command("/start")
        messages = await user.wait_for(1, timeout=60)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), 30)
    stderr = err.decode()
    assert messages and "I'm Sommelier" in messages[0]["text"], stderr[-2000:]
    assert (
        tmp_path / "data" / "sommelier" / "sommelier.db"
    ).exists()  # migrations and starter catalog on first run
    assert token not in stderr  # the token never reaches the logs
