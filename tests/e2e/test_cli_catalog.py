"""The `sommelier` command as a new user meets it: fresh directory, embedded defaults."""

import json
import os
import subprocess
import sys
from pathlib import Path

SOMMELIER = [sys.executable, "-m", "sommelier.cli"]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    environment.update(env or {})
    return subprocess.run(
        [*SOMMELIER, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


def test_first_run_migrates_loads_starter_and_searches(tmp_path: Path) -> None:
    result = run(
        "catalog", "search", "--type", "red", "--country", "france", "--json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["total"] == 9
    assert {"Château Margaux", "Guigal Côtes du Rhône Rouge"} <= {w["name"] for w in found["wines"]}
    assert (tmp_path / "data" / "sommelier" / "sommelier.db").exists()
    table = run("catalog", "search", "--type", "red", "--country", "france", cwd=tmp_path)
    assert "9 wine(s) found" in table.stdout


def test_import_reports_bad_rows_and_skip_invalid(tmp_path: Path) -> None:
    catalog = tmp_path / "mine.csv"
    catalog.write_text(
        "id,name,type,price\nm-1,Gooseberry Fool,red,10\nm-2,Bad,red,cheap\n", encoding="utf-8"
    )
    failed = run("catalog", "import", str(catalog), cwd=tmp_path)
    assert failed.returncode == 1
    assert f"{catalog}:3: price:" in failed.stderr and "nothing was imported" in failed.stderr
    done = run("catalog", "import", str(catalog), "--skip-invalid", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "imported 1 wine(s) (1 new, 0 updated)" in done.stdout
    # It says where the catalog went, so it does not "vanish" when run from elsewhere.
    assert str(tmp_path / "data" / "sommelier" / "sommelier.db") in done.stdout.replace("\n", "")
    assert "skipped 1 bad row(s)" in done.stderr
    again = run("catalog", "search", "gooseberry fool", "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["wines"][0]["id"] == "m-1"


def test_bad_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run(
        "catalog",
        "search",
        "--type",
        "red",
        cwd=tmp_path,
        env={"SOMMELIER_DATABASE_URL": "oracle://nope"},
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "SOMMELIER_DATABASE_URL" in result.stderr and "Traceback" not in result.stderr


def test_db_upgrade_command(tmp_path: Path) -> None:
    result = run("db", "upgrade", cwd=tmp_path)
    assert result.returncode == 0 and "up to date" in result.stdout
