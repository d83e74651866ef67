import pytest

from sommelier.config import ConfigError, load_settings


def test_defaults_are_embedded_and_documented_names_exist() -> None:
    settings = load_settings(_env_file=None)
    # A per-user data folder (the tests point XDG_DATA_HOME at their own folder).
    assert settings.database_url.startswith("sqlite+aiosqlite:///")
    assert settings.database_url.endswith("/sommelier/sommelier.db")
    assert settings.structured_output_max_retries == 2
    assert settings.agent_max_iterations == 5


def test_environment_overrides_with_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOMMELIER_AGENT_MAX_ITERATIONS", "3")
    monkeypatch.setenv("SOMMELIER_DATABASE_URL", "postgresql://u@db:5432/wine")
    settings = load_settings(_env_file=None)
    assert settings.agent_max_iterations == 3
    # Plain URLs get the async driver, so users need not know about it.
    assert settings.database_url == "postgresql+asyncpg://u@db:5432/wine"


def test_dotenv_file_is_read(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("SOMMELIER_LLM_MODEL=qwen2.5\n")
    monkeypatch.chdir(tmp_path)
    assert load_settings().llm_model == "qwen2.5"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SOMMELIER_DATABASE_URL", "not a url", "SOMMELIER_DATABASE_URL: not a database URL"),
        ("SOMMELIER_DATABASE_URL", "mysql://x/y", "SOMMELIER_DATABASE_URL: unsupported database"),
        ("SOMMELIER_STRUCTURED_OUTPUT_MAX_RETRIES", "-1", "greater than or equal to 0"),
        ("SOMMELIER_AGENT_MAX_ITERATIONS", "many", "valid integer"),
    ],
)
def test_bad_value_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert "\n" not in message
    assert variable in message
    assert expected in message


def test_secret_values_are_not_echoed_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOMMELIER_LLM_TEMPERATURE", "9")
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None, llm_api_key="sk-secret-value")
    assert "sk-secret-value" not in str(caught.value)
