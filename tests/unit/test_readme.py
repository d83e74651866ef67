"""README stays true: every setting is in its configuration table."""

from pathlib import Path

from sommelier.config import ENV_PREFIX, Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented() -> None:
    missing = [
        f"{ENV_PREFIX}{name.upper()}"
        for name in Settings.model_fields
        if f"`{ENV_PREFIX}{name.upper()}`" not in README
    ]
    assert missing == []


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    command = README.split("## Test it", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert command.strip() in ci
