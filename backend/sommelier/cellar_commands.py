"""`sommelier cellar`: import, list and export a person's cellar from the terminal. Like every
command, each imports what it needs when it runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from sommelier.app import App
    from sommelier.cellar.store import Added, Held, Owner

cellar_cli = typer.Typer(help="Your cellar: the bottles you own.", no_args_is_help=True)

User = Annotated[
    str | None, typer.Option(help="Whose cellar: your name in `sommelier chat` (default: login).")
]


async def _owner(session: AsyncSession, user: str | None) -> Owner:
    from sommelier.cellar.store import owner_of
    from sommelier.terminal import person_for

    return await owner_of(session, person_for(user))


@cellar_cli.command("import")
def cellar_import(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The file.")],
    user: User = None,
) -> None:
    """Add bottles from a file: this project's CSV (what `cellar export` writes),
    CellarTracker's export of My Cellar, or Vivino's cellar export. Each wine is matched to the
    catalog; one it lacks is kept as your own. A file with a bad row adds nothing."""
    from sommelier.cellar.files import CellarFileError, read_file
    from sommelier.cellar.store import add_rows, cellar_of
    from sommelier.command_line import err, fail, out, run_with_app

    try:
        parsed = read_file(path.read_bytes(), str(path))
    except CellarFileError as exc:
        for row_error in exc.errors[:200]:
            err().print(str(row_error), highlight=False, markup=False)
        raise fail(str(exc)) from None

    async def body(app: App) -> Added:
        async with app.sessions() as session:
            owner = await _owner(session, user)
            cellar = await cellar_of(session, owner)
            added = await add_rows(session, cellar, parsed.rows, owner.user_id, parsed.format)
            await session.commit()
            return added

    added = run_with_app(body, chats=False)
    out().print(
        f"added {added.bottles} bottle(s) in {added.rows} row(s) from a {parsed.format} file: "
        f"{added.matched} found in the catalog, {added.rows - added.matched} kept as your own",
        highlight=False,
        soft_wrap=True,  # one line, whatever the terminal's width
    )
    for line in parsed.skipped:
        err().print(f"skipped {line}", highlight=False, markup=False)


def _held(user: str | None) -> list[Held]:
    from sommelier.cellar.store import cellar_of, held
    from sommelier.command_line import run_with_app

    async def body(app: App) -> list[Held]:
        async with app.sessions() as session:
            cellar = await cellar_of(session, await _owner(session, user))
            found = await held(session, cellar)
            await session.commit()
            return found

    return run_with_app(body, chats=False)


@cellar_cli.command("list")
def cellar_list(
    user: User = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What is in the cellar, at its peak first, then ready, too young and past it."""
    from rich.table import Table

    from sommelier.cellar.files import OWN_COLUMNS
    from sommelier.command_line import out

    found = _held(user)
    if as_json:
        rows = [
            {
                **{c: getattr(h.bottle, c) for c in OWN_COLUMNS},
                "readiness": str(h.readiness),
                "window": [h.window.ready, h.window.peak_from, h.window.peak_until],
            }
            for h in found
        ]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return
    if not found:
        out().print("The cellar is empty: add bottles with `sommelier cellar import FILE`.")
        return
    table = Table("readiness", "bottles", "wine", "vintage", "where", "peak")
    for h in found:
        b = h.bottle
        wine = " ".join(p for p in (b.producer, b.name) if p and p not in b.name) or b.name
        peak = f"{h.window.peak_from}–{h.window.peak_until}"
        table.add_row(
            str(h.readiness).replace("_", " "),
            str(b.quantity),
            wine,
            b.vintage or "",
            b.location or "",
            peak,
        )
    out().print(table)
    out().print(f"{sum(h.bottle.quantity for h in found)} bottle(s)", highlight=False)


@cellar_cli.command("export")
def cellar_export(
    user: User = None,
    output: Annotated[
        Path | None, typer.Option(help="Write the CSV here (default: standard output).")
    ] = None,
) -> None:
    """The cellar as this project's CSV, which `cellar import` reads back."""
    from sommelier.cellar.files import write_csv

    found = _held(user)
    text = write_csv([h.bottle for h in found], [str(h.readiness) for h in found])
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
