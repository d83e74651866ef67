"""The `sommelier` command. Each command imports what it needs when it runs: `--help` and
`catalog search` pay for no model client, Telegram library, observability or vision code (the
whole application graph took 1.7 s to import, on every command)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sommelier.cellar_commands import cellar_cli
from sommelier.command_line import (
    connect_errors,
    database_down,
    err,
    fail,
    logged,
    out,
    run_with_app,
    settings_or_exit,
)

if TYPE_CHECKING:
    from pydantic import ValidationError
    from rich.progress import Progress
    from rich.table import Table

    from sommelier.app import App
    from sommelier.catalog.importer import ImportReport
    from sommelier.catalog.label_index import LabelMatch, Recognition
    from sommelier.catalog.search import SearchFilters, SearchResult
    from sommelier.config import Settings


PROGRESS_MIN_ROWS = 2000

cli = typer.Typer(
    help="Sommelier: a wine-recommending chat bot over a real catalog.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_cli = typer.Typer(help="Database commands.", no_args_is_help=True)
catalog_cli = typer.Typer(help="Wine catalog commands.", no_args_is_help=True)
model_cli = typer.Typer(help="Model endpoint commands.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
cli.add_typer(catalog_cli, name="catalog")
mcp_cli = typer.Typer(help="MCP: the catalog for other assistants.", no_args_is_help=True)
cli.add_typer(mcp_cli, name="mcp")
cli.add_typer(model_cli, name="model")
cli.add_typer(cellar_cli, name="cellar")


@mcp_cli.command("serve")
def mcp_serve(
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP on 127.0.0.1 instead of stdio.")
    ] = False,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --http.")] = 8765,
    cellar_of: Annotated[
        str | None,
        typer.Option(
            "--cellar-of",
            help="Also offer this person's cellar (their `sommelier chat --user` name), "
            "read-only: the my_cellar tool and the cellar://mine resource.",
        ),
    ] = None,
) -> None:
    """Serve the catalog's search_wines and get_wine tools to MCP clients (a desktop
    assistant, an IDE): stdio by default, or streamable HTTP at http://127.0.0.1:PORT/mcp."""
    import contextlib

    from sommelier.catalog.tools import CatalogTools
    from sommelier.cellar.tool import URI as CELLAR_URI
    from sommelier.cellar.tool import cellar_tool
    from sommelier.mcp_tools.serve import catalog_server, serve_http, serve_stdio

    # This server never uses other MCP servers: one listed here could be this very command.
    settings = settings_or_exit().model_copy(update={"mcp_servers": {}})
    logged(settings, console=False)  # stderr: stdout carries the protocol

    async def body(app: App) -> None:
        registry = CatalogTools(app.sessions, count=True).registry()
        resources = {}
        if cellar_of:
            registry.add(cellar := cellar_tool(app.sessions, cellar_of))
            resources[CELLAR_URI] = cellar
        server = catalog_server(registry, resources)
        if http:
            err().print(f"MCP catalog server on http://127.0.0.1:{port}/mcp", highlight=False)
            await serve_http(server, port)
        else:
            await serve_stdio(server)

    with contextlib.suppress(KeyboardInterrupt):
        run_with_app(body, chats=False, settings=settings)


@db_cli.command("upgrade")
def db_upgrade() -> None:
    """Apply the database migrations."""
    import asyncio

    from sommelier.db.migrate import upgrade

    settings = settings_or_exit()
    try:
        asyncio.run(upgrade(settings.database_url))
    except connect_errors() as exc:
        raise database_down(settings, exc) from None
    out().print("database is up to date")


def _import_progress() -> tuple[Progress, Callable[[str, int, int], None]]:
    """A progress bar per stage of a large import (on stderr), and the callback that feeds it."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err(),
        transient=True,
    )
    tasks: dict[str, TaskID] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        if total < PROGRESS_MIN_ROWS:
            return
        if stage not in tasks:
            tasks[stage] = progress.add_task(stage, total=total)
        progress.update(tasks[stage], completed=done)

    return progress, on_progress


@catalog_cli.command("import")
def catalog_import(
    paths: Annotated[list[Path], typer.Argument(help="Catalog files: CSV, JSON or X-Wines.")],
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Import the good rows, list the bad ones.")
    ] = False,
) -> None:
    """Import wines (and X-Wines ratings) into the catalog. Re-importing updates in place."""
    from sommelier.catalog.formats import CatalogFileError
    from sommelier.catalog.importer import CatalogImportError, bad_rows, import_catalog
    from sommelier.db.session import describe_database

    progress, on_progress = _import_progress()

    async def body(app: App) -> ImportReport:
        with progress:
            return await import_catalog(
                app.sessions, paths, skip_invalid=skip_invalid, progress=on_progress
            )

    try:
        report = run_with_app(body, chats=False)
    except CatalogFileError as exc:
        raise fail(str(exc)) from None
    except CatalogImportError as exc:
        for row_error in exc.errors[:200]:
            err().print(str(row_error), highlight=False, markup=False)
        if len(exc.errors) > 200:
            err().print(f"… and {len(exc.errors) - 200} more", highlight=False)
        raise fail(f"{exc}. Fix the rows or use --skip-invalid.") from None
    out().print(
        f"imported {report.wines} wine(s) ({report.wines_inserted} new, "
        f"{report.wines_updated} updated), {report.ratings_upserted} rating(s) into "
        f"{describe_database(settings_or_exit().database_url)}",
        highlight=False,
    )
    if report.skipped:
        err().print(f"skipped {bad_rows(report.skipped)} bad row(s):", highlight=False)
        for row_error in report.skipped:
            err().print(f"  {row_error}", highlight=False, markup=False)


@catalog_cli.command("search")
def catalog_search(
    query: Annotated[str | None, typer.Argument(help="Free text.")] = None,
    type: Annotated[str | None, typer.Option(help="red, white, rosé, sparkling, …")] = None,
    sweetness: Annotated[str | None, typer.Option()] = None,
    body: Annotated[str | None, typer.Option()] = None,
    grape: Annotated[str | None, typer.Option()] = None,
    country: Annotated[str | None, typer.Option()] = None,
    region: Annotated[str | None, typer.Option()] = None,
    food: Annotated[str | None, typer.Option()] = None,
    min_price: Annotated[float | None, typer.Option()] = None,
    max_price: Annotated[float | None, typer.Option()] = None,
    min_rating: Annotated[float | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option(min=1, max=20)] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Search the catalog with filters and free text."""
    filters = _search_filters(dict(locals()))  # the command's options, as given
    from sommelier.catalog.search import SearchError, search_wines
    from sommelier.catalog.tools import CatalogTools

    async def body_(app: App) -> SearchResult:
        names = await CatalogTools(app.sessions).names()
        async with app.sessions() as session:
            return await search_wines(session, filters, words_as_filters=True, names=names)

    try:
        result = run_with_app(body_, chats=False)
    except SearchError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(result.model_dump(), ensure_ascii=False, indent=2) + "\n")
    else:
        out().print(_result_table(result))


@cli.command("label")
def label(
    photo: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A photo of a label or list.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Recognise a wine label (or a wine list) on a photo: the catalog wines it shows, with
    how sure each match is. Needs the vision extra: pip install -e '.[vision]'."""
    from dataclasses import asdict

    from sommelier.vision import ocr
    from sommelier.vision.photos import PhotoReader

    if not ocr.available():
        raise fail(str(ocr.VisionMissing()))

    async def body_(app: App) -> Recognition:
        return await PhotoReader(app.sessions).recognise(photo.read_bytes())

    started = time.perf_counter()
    try:
        found = run_with_app(body_, chats=False)
    except ocr.UnreadableImage as exc:
        raise fail(f"{photo}: {exc}") from None
    seconds = time.perf_counter() - started
    if as_json:
        data = {**asdict(found), "seconds": round(seconds, 2)}
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out().print(f"read: {' / '.join(found.text) or '(no text)'}")
    out().print(_label_table(found.listed if found.is_list else found.matches, found))


def _label_table(matches: list[LabelMatch], found: Recognition) -> Table:
    from rich.table import Table

    title = "wines on the list" if found.is_list else ("sure" if found.sure else "not sure")
    table = Table(title=title)
    for column in ("id", "name", "producer", "vintage", "confidence"):
        table.add_column(column)
    for m in matches:
        table.add_row(m.wine_id, m.name, m.producer or "", m.vintage or "", f"{m.confidence:.2f}")
    return table


def _search_filters(options: dict[str, object]) -> SearchFilters:
    """The search the options ask for; a wrong one exits with which option and why."""
    from pydantic import ValidationError

    from sommelier.catalog.search import SearchFilters

    fields = {k: v for k, v in options.items() if k in SearchFilters.model_fields}
    try:
        return SearchFilters.model_validate(fields)
    except ValidationError as exc:
        raise fail(_options_problem(exc), 2) from None


def _options_problem(exc: ValidationError) -> str:
    """ "--min-price: must be at least 0 (got -5)": the option, not the model's field."""
    return "; ".join(
        f"--{str(e['loc'][0]).replace('_', '-')}: {e['msg'].removeprefix('Value error, ')} "
        f"(got {e.get('input')!r})"
        for e in exc.errors()
    )


def _result_table(result: SearchResult) -> Table:
    from rich.table import Table

    found = f"{result.total}+" if result.more else str(result.total)
    table = Table(title=f"{found} wine(s) found", title_justify="left")
    for column in ("id", "wine", "region", "style", "price", "rating"):
        table.add_column(column)
    for wine in result.wines:
        table.add_row(
            wine.id,
            f"{wine.name}\n[dim]{wine.producer or ''}[/dim]",
            wine.region or "",
            wine.style,
            wine.price or "—",
            f"{wine.rating:.1f}" if wine.rating is not None else "—",
        )
    return table


def _describe_choice(app: App) -> str:
    s = app.settings
    model = app.model()
    return (
        f"{s.llm_model} at {s.llm_base_url}: {app.strategy()} strategy, "
        f"{model.response_format_mode} answer format"
        + (", streaming" if app.profile.streaming else "")
    )


UNREACHABLE = (
    "the model at {url} did not answer; start an OpenAI-compatible server there or set "
    "SOMMELIER_LLM_BASE_URL (and SOMMELIER_LLM_MODEL) to one"
)


@model_cli.command("check")
def model_check() -> None:
    """Probe the configured endpoint and model once: what works, how fast; the result is stored
    and picks the strategy and answer format."""

    from rich.table import Table

    async def body(app: App) -> tuple[bool, Table, str]:
        profile, checks = await app.check_model(progress=_progress)
        table = Table(title=f"{app.settings.llm_model} at {app.settings.llm_base_url}")
        table.add_column("check")
        table.add_column("result")
        for check in checks:
            mark = {True: "[green]✓[/green] ", False: "[yellow]✗[/yellow] ", None: ""}[check.ok]
            table.add_row(check.name, mark + check.result)
        return profile.reachable, table, _describe_choice(app) if profile.reachable else ""

    reachable, table, choice = run_with_app(body)
    out().print(table)
    if not reachable:
        raise fail(UNREACHABLE.format(url=settings_or_exit().llm_base_url), 3)
    out().print(f"stored; turns will use: {choice}", highlight=False)


def chat_log_file() -> Path:
    import platformdirs

    folder = platformdirs.user_log_path("sommelier", appauthor=False)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "chat.log"


def _progress(line: str) -> None:
    err().print(line, highlight=False, markup=False)


def check_model_once() -> None:
    """Before the first start: check the endpoint when nothing is stored for it yet."""

    async def body(app: App) -> str:
        if app.profile.checked:
            return f"model: {_describe_choice(app)}"
        err().print("checking what the model endpoint can do (once)…", highlight=False)
        profile, _ = await app.check_model(progress=_progress)
        if not profile.reachable:
            return (
                f"no model answers at {app.settings.llm_base_url} yet: wine requests are "
                "answered from the catalog alone until one does (README: Connect a model; "
                "SOMMELIER_LLM_BASE_URL and SOMMELIER_LLM_MODEL)"
            )
        return f"model check: {_describe_choice(app)}"

    err().print(run_with_app(body), highlight=False, markup=False)


SmokeOption = Annotated[
    bool,
    typer.Option(
        "--smoke",
        help="The shipped smoke set (three wine requests and one in German); fails unless every "
        "turn ends cleanly, searches the catalog and shows no invented wine.",
    ),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="A set of dialogs by name (tests/eval/sets/NAME.yaml of a checkout) or path; "
        "repeat for several (default: every set there).",
    ),
]


@cli.command("eval")
def evaluate(
    protocols: Annotated[str, typer.Option(help="Output protocols, comma-separated.")] = (
        "json,delimited"
    ),
    strategies: Annotated[str, typer.Option(help="Strategies, comma-separated.")] = "planner",
    dialogs: Annotated[
        int | None, typer.Option(min=1, help="Only the first N dialogs of each set.")
    ] = None,
    smoke: SmokeOption = False,
    only: SetOption = None,
    output: Annotated[
        Path | None, typer.Option(help="Also write every turn as a JSON line (judge it later).")
    ] = None,
    judge: Annotated[
        Path | None,
        typer.Option(help="Judge a stored run (--output's file) again, with no model."),
    ] = None,
    readings: Annotated[
        Path | None,
        typer.Option(help="A human reading of the run (YAML, dialog#turn: ok or why not)."),
    ] = None,
    show_transcript: Annotated[
        bool, typer.Option("--transcript", help="Print every dialog as the person read it.")
    ] = False,
) -> None:
    """Run the evaluation's dialog sets against the configured model and print what the
    independent judge finds, per output protocol and strategy, per language group and
    language. Uses a temporary database; yours is not touched."""
    from sommelier.evaluation.cli import choose_sets, judge_stored, run_evaluation
    from sommelier.evaluation.sets import SetError

    if judge is not None:
        raise typer.Exit(judge_stored(judge, out(), readings, show_transcript))
    try:
        sets = choose_sets(only or [], smoke, dialogs)
    except SetError as exc:
        raise typer.BadParameter(str(exc), param_hint="--set") from None
    settings = logged(settings_or_exit(), console=True)
    code = run_evaluation(
        settings,
        sets=sets,
        protocols=[p.strip() for p in protocols.split(",") if p.strip()],
        strategies=[s.strip() for s in strategies.split(",") if s.strip()],
        smoke=smoke,
        output=output,
        console=out(),
        readings=readings,
        show_transcript=show_transcript,
    )
    raise typer.Exit(code)


@cli.command("chat")
def chat(
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Send one message and exit.")
    ] = None,
    user: Annotated[str | None, typer.Option(help="Your name (default: your login).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured reply.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show logs here instead of in the log file.")
    ] = False,
) -> None:
    """Chat with the sommelier in the terminal (interactive, or one message with --message).

    Exit codes: 0 an answer, 1 no answer could be produced, 2 bad configuration or usage,
    3 the model is unreachable."""
    from dataclasses import replace

    from sommelier.db.session import describe_database
    from sommelier.terminal import interactive, one_shot, person_for
    from sommelier.terminal.session import Where

    if message is not None and not message.strip():
        raise fail("--message is empty; write what you are looking for", 2)
    settings = settings_or_exit()
    log_file = None if verbose else chat_log_file()
    logged(settings, console=True, log_file=log_file)
    where = Where(
        describe_database(settings.database_url),
        settings.llm_base_url,
        str(log_file) if log_file else None,
    )

    async def body(app: App) -> int:
        service = app.chat_service()
        here = replace(where, stale_after=app.stale_after())
        person = person_for(user)
        stream = app.settings.streaming
        if message is not None:
            return await one_shot(service, person, message, as_json, stream, here)
        return await interactive(service, person, stream, here)

    raise typer.Exit(run_with_app(body))


@cli.command("bot")
def bot() -> None:
    """Run the Telegram bot: long polling, or a webhook when SOMMELIER_TELEGRAM_WEBHOOK_URL is
    set. With SOMMELIER_TELEGRAM_QUEUE=true it receives and queues, and `sommelier worker`
    processes answer."""
    from sommelier.bot.runner import run_bot

    settings = settings_or_exit()
    _telegram_settings(settings)
    if settings.telegram_webhook_url and not settings.telegram_webhook_secret:
        raise fail(
            "SOMMELIER_TELEGRAM_WEBHOOK_SECRET is required in webhook mode, so that only "
            "Telegram can call the webhook",
            2,
        )
    _run_telegram(settings, run_bot)


@cli.command("worker")
def worker() -> None:
    """Answer the Telegram updates `sommelier bot` queued (SOMMELIER_TELEGRAM_QUEUE=true, on
    PostgreSQL); run as many as you like, and stop or add them at any time."""
    from sommelier.bot.runner import run_queue_worker

    settings = settings_or_exit()
    _telegram_settings(settings)
    if not settings.telegram_queue:
        raise fail("set SOMMELIER_TELEGRAM_QUEUE=true (on PostgreSQL) for workers", 2)
    _run_telegram(settings, run_queue_worker)


def _telegram_settings(settings: Settings) -> None:
    if not settings.telegram_bot_token:
        raise fail("SOMMELIER_TELEGRAM_BOT_TOKEN is not set; create a bot with @BotFather", 2)
    logged(settings, console=settings.log_format == "console")


def _run_telegram(settings: Settings, run: Callable[[Settings], None]) -> None:
    from procrastinate.exceptions import ConnectorException
    from sqlalchemy.exc import SQLAlchemyError
    from telegram.error import InvalidToken, NetworkError

    from sommelier.config import ConfigError
    from sommelier.db.session import DatabaseUnreachable

    assert settings.telegram_bot_token is not None
    try:
        run(settings)
    except InvalidToken:
        raise fail(
            "Telegram refused the bot token; check SOMMELIER_TELEGRAM_BOT_TOKEN (from @BotFather)",
            2,
        ) from None
    except (SQLAlchemyError, ConnectorException, DatabaseUnreachable) as exc:
        cause = exc.__cause__ if isinstance(exc, DatabaseUnreachable) else None
        raise database_down(settings, cause or exc) from None
    except (NetworkError, OSError) as exc:
        where = settings.telegram_base_url or "api.telegram.org"
        reason = str(exc).replace(settings.telegram_bot_token, "***") or type(exc).__name__
        raise fail(
            f"cannot reach Telegram at {where} ({reason}); check the network or "
            "SOMMELIER_TELEGRAM_BASE_URL",
            1,
        ) from None
    except ConfigError as exc:
        raise fail(str(exc), 2) from None


@cli.command("start")
def start() -> None:
    """Start the product: the Telegram bot when a token is set, else the terminal chat."""
    from sommelier.db.session import describe_database

    settings = settings_or_exit()
    err().print(f"database: {describe_database(settings.database_url)}", highlight=False)
    check_model_once()
    if settings.telegram_bot_token:
        bot()
    else:
        err().print("No SOMMELIER_TELEGRAM_BOT_TOKEN set: starting the terminal chat.")
        chat(message=None, user=None, as_json=False)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
