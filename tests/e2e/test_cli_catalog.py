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


def one_line(result: subprocess.CompletedProcess) -> str:  # type: ignore[type-arg]
    """A failure a newcomer can act on: one line on stderr, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_postgres_database_that_does_not_exist_names_the_command_that_creates_it(
    tmp_path: Path,
) -> None:
    from tests.support.databases import PG_ADMIN_DSN

    url = PG_ADMIN_DSN.rpartition("/")[0] + "/sommelier_missing_db"
    for command in (["db", "upgrade"], ["catalog", "search", "--type", "red"]):
        result = run(*command, cwd=tmp_path, env={"SOMMELIER_DATABASE_URL": url})
        assert result.returncode == 1
        line = one_line(result)
        assert "does not exist" in line and "createdb" in line and "sommelier_missing_db" in line


def test_each_first_hour_failure_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    bad_json = run(
        "catalog", "search", cwd=tmp_path, env={"SOMMELIER_MCP_SERVERS": "{files: [mcp-files]"}
    )
    assert bad_json.returncode == 2
    assert "SOMMELIER_MCP_SERVERS is not valid JSON" in one_line(bad_json)
    placeholder = run("catalog", "search", cwd=tmp_path, env={"SOMMELIER_LLM_API_KEY": "CHANGEME"})
    assert placeholder.returncode == 2
    assert "SOMMELIER_LLM_API_KEY" in one_line(placeholder) and "CHANGEME" not in placeholder.stdout
    for option, value in (("--min-price", "-5"), ("--min-rating", "7")):
        bounds = run("catalog", "search", option, value, cwd=tmp_path)
        assert bounds.returncode == 2
        line = one_line(bounds)
        assert line.startswith(f"error: {option}:") and f"(got {float(value)})" in line
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    refused = run("catalog", "import", str(empty), cwd=tmp_path)
    assert refused.returncode == 1 and "the file is empty" in one_line(refused)


def test_a_misspelt_setting_in_dotenv_is_named_with_the_closest_setting(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SOMMELIER_LLM_MODLE=qwen2.5\n", encoding="utf-8")
    result = run("catalog", "search", "--type", "red", cwd=tmp_path)
    assert result.returncode == 0
    assert (
        "SOMMELIER_LLM_MODLE in .env is not a setting and is ignored; did you mean "
        "SOMMELIER_LLM_MODEL?" in result.stderr.replace("\n", " ")
    )


def test_bad_rows_are_counted_as_rows_not_problems(tmp_path: Path) -> None:
    catalog = tmp_path / "mine.csv"
    catalog.write_text(
        "id,name,type,price,vintage\nm-1,Fine,red,10,2020\nm-2,Bad,purple,cheap,old\n",
        encoding="utf-8",
    )
    failed = run("catalog", "import", str(catalog), cwd=tmp_path)
    assert failed.returncode == 1
    assert "1 bad row(s) (3 problems); nothing was imported" in failed.stderr.replace("\n", " ")


def test_label_prints_the_wine_on_a_photo_with_its_confidence(tmp_path: Path) -> None:
    from tests.support.label_images import render_label

    photo = tmp_path / "label.png"
    photo.write_bytes(render_label(["Château Musar", "Bekaa Valley", "2016"], seed=1))
    result = run("label", str(photo), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["sure"] and found["matches"][0]["wine_id"] == "sm-068"
    assert 0.75 <= found["matches"][0]["confidence"] <= 1
    table = run("label", str(photo), cwd=tmp_path)
    assert "sm-068" in table.stdout and "Château Musar" in table.stdout
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a picture")
    failed = run("label", str(broken), cwd=tmp_path)
    assert failed.returncode == 1 and "broken.png: not an image" in failed.stderr
