"""What every `sommelier` command shares: its consoles, its exit with a message, its settings,
and the app it runs in. Imports are paid when a command runs, not at start-up."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from sommelier.app import App
    from sommelier.config import Settings

T = TypeVar("T")


def connect_errors() -> tuple[type[BaseException], ...]:
    """A database that cannot be reached, or refuses us (one that does not exist: a DBAPIError)."""
    from sqlalchemy.exc import DBAPIError

    from sommelier.db.session import DATABASE_ERRORS

    return (*DATABASE_ERRORS, DBAPIError)


@functools.cache
def out() -> Console:
    from rich.console import Console

    return Console()


@functools.cache
def err() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 1) -> typer.Exit:
    from rich.markup import escape

    err().print(f"[red]error:[/red] {escape(message)}", highlight=False, markup=True)
    return typer.Exit(code)


def settings_or_exit() -> Settings:
    from sommelier.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    _warn_unknown_settings()
    return settings


def logged(settings: Settings, **where: Any) -> Settings:
    """The settings, with logging configured from them (`where`: configure_logging's)."""
    from sommelier.observability.logs import configure_logging

    configure_logging(settings, **where)
    return settings


@functools.cache  # once per command, however many steps read the settings
def _warn_unknown_settings() -> None:
    from sommelier.config import unknown_settings

    for warning in unknown_settings():
        err().print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


def run_with_app(
    body: Callable[[App], Awaitable[T]],
    *,
    prepare: bool = True,
    chats: bool = True,
    settings: Settings | None = None,
) -> T:
    """`body` with the app built and prepared (`chats`: for a command that talks to the model;
    the others skip its profile, MCP servers and language models)."""
    import asyncio

    from sommelier.app import App
    from sommelier.config import ConfigError

    settings = settings or settings_or_exit()

    async def main() -> T:
        app = App.build(settings)
        try:
            if prepare:
                await app.prepare(chats=chats)
            return await body(app)
        finally:
            await app.aclose()

    try:
        return asyncio.run(main())
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    except connect_errors() as exc:
        raise database_down(settings, exc) from None


def database_down(settings: Settings, exc: BaseException) -> typer.Exit:
    from sommelier.db.session import database_problem, describe_database, missing_database

    where = describe_database(settings.database_url)
    create = missing_database(settings.database_url, exc)
    if create is not None:
        return fail(f"the database at {where} does not exist; create it with: {create}", 1)
    return fail(
        f"the database at {where} cannot be reached ({database_problem(exc)}); "
        "check SOMMELIER_DATABASE_URL",
        1,
    )
