"""`sommelier cellar` as a person meets it: a CellarTracker export imported, listed by
readiness, exported and read back; a file with a bad row adds nothing and says where."""

import json
from pathlib import Path

from tests.e2e.test_cli_catalog import run

DATA = Path(__file__).resolve().parents[1] / "data"


def test_import_list_and_export_a_cellartracker_cellar(tmp_path: Path) -> None:
    source = DATA / "cellartracker_my_cellar.csv"
    done = run("cellar", "import", str(source), "--user", "ana", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "added 6 bottle(s) in 3 row(s) from a cellartracker file" in done.stdout
    assert "2 found in the catalog, 1 kept as your own" in done.stdout
    assert "skipped line 5: no bottle in the cellar (quantity 0)" in done.stderr
    listed = json.loads(run("cellar", "list", "--user", "ana", "--json", cwd=tmp_path).stdout)
    assert sorted((b["name"], b["quantity"]) for b in listed) == [
        ("Domaine Tempier Bandol Rouge", 3),
        ("Louis Jadot Bourgogne Pinot Noir", 2),
        ("Moët & Chandon Impérial Brut", 1),
    ]
    assert {b["readiness"] for b in listed} <= {"too_young", "ready", "peak", "past"}
    table = run("cellar", "list", "--user", "ana", cwd=tmp_path).stdout
    assert "6 bottle(s)" in table and "Cellar / A3" in table
    # Someone else's cellar is not Ana's.
    bob = json.loads(run("cellar", "list", "--user", "bob", "--json", cwd=tmp_path).stdout)
    assert bob == []
    exported = tmp_path / "ana.csv"
    run("cellar", "export", "--user", "ana", "--output", str(exported), cwd=tmp_path)
    again = run("cellar", "import", str(exported), "--user", "bob", cwd=tmp_path)
    assert "added 6 bottle(s) in 3 row(s) from a csv file" in again.stdout, again.stderr


def test_a_file_with_a_bad_row_adds_nothing_and_names_it(tmp_path: Path) -> None:
    bad = tmp_path / "mine.csv"
    bad.write_text("name,quantity,vintage\nCatena Malbec,6,2021\nBarolo,six,2019\n")
    failed = run("cellar", "import", str(bad), "--user", "ana", cwd=tmp_path)
    assert failed.returncode == 1
    assert f"{bad}:3: quantity: 'six' is not a number of bottles" in failed.stderr
    assert "nothing was imported" in failed.stderr
    listed = run("cellar", "list", "--user", "ana", "--json", cwd=tmp_path)
    assert json.loads(listed.stdout) == []


def test_the_terminal_chat_lists_the_cellar_and_forgets_it_only_when_asked(tmp_path: Path) -> None:
    """/cellar in `sommelier chat`; /forget deletes the taste and says the cellar is kept;
    /forget cellar deletes it. No model is needed for any of it."""
    from tests.e2e.test_cli_chat import run_chat

    run("cellar", "import", str(DATA / "vivino_cellar.csv"), "--user", "ana", cwd=tmp_path)
    chat = run_chat(
        tmp_path, "http://127.0.0.1:9/v1", "--user", "ana",
        stdin="/cellar\n/forget\n/cellar\n/forget cellar\n/cellar\n/exit\n",
    )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout
    assert out.count("Bottles in the cellar: 5") == 2  # before and after /forget
    assert "4 × Catena Malbec 2021" in out
    assert "Your cellar still holds 5 bottles; /forget cellar deletes it." in out
    assert "Your cellar is deleted (5 bottles)." in out
    assert "Your cellar is empty" in out


def test_the_terminal_chat_adds_bottles_said_at_add(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    """Bottles said in `sommelier chat`: the proposal, then /add 1 adds them, once."""
    from tests.e2e.test_cli_chat import run_chat
    from tests.support.fake_openai import completion
    from tests.support.scripted import plan_text

    catena = {"wine": "Catena Malbec", "bottles": 6, "vintage": 2019, "place": "rack B"}
    said = "I bought 6 bottles of Catena Malbec 2019, in rack B"
    fake_openai.add(completion(plan_text("add_to_cellar", catena, english=said)))
    chat = run_chat(
        tmp_path, fake_openai.base_url, "--user", "ana",
        stdin=f"/add 1\n{said}\n/add 4\n/add 1\n/add 1\n/cellar\n/exit\n",
    )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout
    assert "Tell me first which bottles you have." in out  # /add before any proposal
    assert "Shall I add 6 bottles of this wine to your cellar?" in out
    assert "/add 1 adds them to your cellar." in out
    assert "No wine 4 was offered." in out
    assert (
        "Added to the cellar: 6 × Catena Malbec · 2019 · rack B. Bottles of it there now: 6."
        in (" ".join(out.split()))
    )
    assert "Already added to the cellar: Catena Malbec." in out
    assert "6 × Catena Malbec 2019 · rack B" in out
    assert len(fake_openai.requests) == 1
