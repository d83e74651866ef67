"""Settings from the environment (prefix SOMMELIER_) and an optional .env file.

Every setting is documented in README.md's configuration table. A bad value fails at start-up
with one line naming the variable (see `ConfigError`), never a traceback.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from typing import Annotated, Any

import platformdirs
from dotenv import dotenv_values
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError
from rapidfuzz import process
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

ENV_PREFIX = "SOMMELIER_"

NonNegInt = Annotated[int, Field(ge=0)]
PosInt = Annotated[int, Field(gt=0)]
PosFloat = Annotated[float, Field(gt=0)]


class ResponseFormatMode(StrEnum):
    """How the final answer's format is asked of the model."""

    json_schema = "json_schema"  # strict response_format json_schema (OpenAI, vLLM, llama-server)
    json_object = "json_object"  # response_format json_object with a "schema" field (llama.cpp)
    grammar = "grammar"  # a GBNF grammar made from the schema (llama.cpp servers)
    prompt = "prompt"  # nothing sent; the format is described in the prompt only
    auto = "auto"  # what `sommelier model check` found; unchecked, json_schema with fallbacks


class AgentStrategy(StrEnum):
    """How a turn gets its tools used (specs/real-models.md)."""

    auto = "auto"  # native when the endpoint returns real tool calls, else planner
    native = "native"  # the model calls tools itself
    planner = "planner"  # a constrained planning step; the runtime runs the tools


SECRET_FIELDS = frozenset({"llm_api_key", "telegram_bot_token", "telegram_webhook_secret"})


class WineSentence(StrEnum):
    model = "model"  # the reasons from data, then one checked sentence of the model's own
    none = "none"  # the reasons from data alone: the grammar leaves the model no room


class OutputProtocol(StrEnum):
    json = "json"
    delimited = "delimited"
    ndjson = "ndjson"


class ConfigError(Exception):
    """A setting is invalid; the message is one line naming the variable."""


class McpServer(BaseModel):
    """An MCP server whose tools the agent may use: a command (stdio) or a URL (HTTP)."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] | None = Field(default=None, min_length=1)
    url: str | None = Field(default=None, pattern=r"^https?://")
    env: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_target(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either a command or a url")
        return self


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        # An empty variable is an unset one (docker-compose passes optional ones empty).
        env_ignore_empty=True,
    )

    # A per-user data folder, not the working directory: a catalog imported from one folder is
    # still there when the chat starts from another.
    database_url: str = Field(default_factory=lambda: default_database_url())
    database_echo: bool = False
    auto_migrate: bool = True
    load_starter_catalog: bool = True

    llm_base_url: str = "http://127.0.0.1:11434/v1"
    llm_api_key: str = Field(default="not-needed", repr=False)
    llm_model: str = "qwen2.5-coder:1.5b"  # what README tells Ollama users to pull
    llm_connect_timeout: PosFloat = 10.0
    # Calls stream, so this bounds silence (a local model's prompt processing), not an answer.
    llm_read_timeout: PosFloat = 120.0
    llm_write_timeout: PosFloat = 10.0
    llm_pool_timeout: PosFloat = 10.0
    llm_network_retries: NonNegInt = 1
    llm_max_output_tokens: PosInt = 512
    llm_temperature: Annotated[float, Field(ge=0, le=2)] = 0.2
    llm_response_format: ResponseFormatMode = ResponseFormatMode.auto
    llm_context_tokens: PosInt = 8192
    # Turns the endpoint serves at once; None: what `sommelier model check` found (1 unless
    # the server reports its slots).
    llm_concurrency: PosInt | None = None
    # Seconds a turn may wait for the model before it is told to try later (its own deadline,
    # SOMMELIER_TURN_TIMEOUT, starts only once it runs).
    queue_wait: PosFloat = 300.0

    agent_strategy: AgentStrategy = AgentStrategy.auto
    agent_clarify_below: Annotated[float, Field(ge=0, le=1)] = 0.7
    # Whether the model adds a sentence of its own to each wine's reasons (said from data). Off
    # by default: on unseen26 the 1.5B model's sentences were garbled or false in a third of its
    # recommendations (22/32 satisfied with them, 30/32 without, and 1.5 s faster).
    wine_sentence: WineSentence = WineSentence.none
    # Whether a message whose own words ask for no wine is first screened by the model for an
    # attempt on the rules (one short call; chat/guard.SCREEN). Off until measured on ordinary
    # conversations as well as on attempts (specs/agent.md, "The screen").
    screen: bool = False
    turn_timeout: Annotated[float, Field(ge=0)] = 180.0
    agent_max_iterations: NonNegInt = 5
    structured_output_max_retries: NonNegInt = 2
    session_inactivity_hours: PosFloat = 12.0
    history_max_chars: PosInt = 2000
    history_max_messages: PosInt = 40
    recovery_compaction: bool = True
    output_protocol: OutputProtocol = OutputProtocol.json
    streaming: bool = True
    stream_retry_delay: Annotated[float, Field(ge=0)] = 2.0
    trace_mask_text: bool = False

    telegram_bot_token: str | None = Field(default=None, repr=False)
    telegram_base_url: str | None = None
    telegram_webhook_url: str | None = None
    telegram_webhook_listen: str = "0.0.0.0"
    telegram_webhook_port: Annotated[int, Field(gt=0, lt=65536)] = 8443
    telegram_webhook_secret: str | None = Field(default=None, repr=False)
    telegram_rate_limit_per_minute: PosInt = 10
    telegram_max_input_chars: PosInt = 1000
    telegram_typing_interval: PosFloat = 4.0
    telegram_max_concurrent_updates: PosInt = 256
    telegram_max_messages_per_second: PosFloat = 30.0
    telegram_queue: bool = False
    telegram_wait_notice_after: PosFloat = 60.0
    telegram_cellar_ask_after_hours: PosFloat = 24.0

    log_level: str = "INFO"
    log_format: str = Field(default="auto", pattern="^(auto|json|console)$")

    # {"name": {"command": ["prog", "arg"]} or {"url": "http://127.0.0.1:8765/mcp"}}
    mcp_servers: dict[str, McpServer] = Field(default_factory=dict)
    mcp_timeout: PosFloat = 10.0

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        return normalise_database_url(value)

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: str | None) -> str | None:
        # Telegram accepts 1-256 characters from A-Z, a-z, 0-9, _ and -.
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", value):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("telegram_queue")
    @classmethod
    def _queue(cls, value: bool, info: ValidationInfo) -> bool:
        # The queue is procrastinate's, in PostgreSQL (bot/queue.py).
        url = str(info.data.get("database_url", ""))
        if value and not url.startswith("postgresql"):
            raise ValueError("needs PostgreSQL (SOMMELIER_DATABASE_URL=postgresql://…)")
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level


def default_database_url() -> str:
    folder = platformdirs.user_data_path("sommelier", appauthor=False)
    return f"sqlite+aiosqlite:///{folder / 'sommelier.db'}"


def normalise_database_url(value: str) -> str:
    """Accept plain sqlite:// and postgresql:// URLs and pick the async driver for them."""
    try:
        url = make_url(value)
    except ArgumentError as exc:
        raise ValueError(f"not a database URL ({exc})") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        return url.set(drivername="sqlite+aiosqlite").render_as_string(hide_password=False)
    if backend in {"postgresql", "postgres"}:
        return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    raise ValueError(f"unsupported database {backend!r}; use sqlite:// or postgresql://")


def load_settings(**overrides: Any) -> Settings:
    """Build Settings, turning validation errors into one readable ConfigError line."""
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc)) from None
    except SettingsError as exc:  # a JSON setting that is not JSON (SOMMELIER_MCP_SERVERS)
        raise ConfigError(describe_settings_error(exc)) from None
    _refuse_placeholders(settings)
    return settings


def describe_settings_error(exc: SettingsError) -> str:
    field = re.search(r'field "(\w+)"', str(exc))
    name = f"{ENV_PREFIX}{field.group(1).upper()}" if field else "a setting"
    example = ' (for example {"files": {"command": ["mcp-files", "--root", "/data"]}})'
    hint = example if field and field.group(1) == "mcp_servers" else ""
    return f"invalid configuration: {name} is not valid JSON{hint}"


def _refuse_placeholders(settings: Settings) -> None:
    """A secret still set to .env.example's placeholder: refused by name, not sent to Telegram
    or the model server to fail there."""
    for field in sorted(SECRET_FIELDS):
        value = getattr(settings, field)
        if isinstance(value, str) and "CHANGEME" in value:
            raise ConfigError(
                f"invalid configuration: {ENV_PREFIX}{field.upper()} is still the placeholder "
                "from .env.example; set the real value"
            )


# Read by the project's scripts and tests, not by the app.
TOOL_NAMES = frozenset(
    {"SOMMELIER_LOCAL_MODEL_PORT", "SOMMELIER_CACHE_DIR", "SOMMELIER_TEST_POSTGRES_DSN"}
)


def unknown_settings(env_file: str = ".env") -> list[str]:
    """One warning per SOMMELIER_* name, in .env or the environment, that is no setting (a
    typo is otherwise silently ignored), with the closest known name."""
    known = [f"{ENV_PREFIX}{name.upper()}" for name in Settings.model_fields]
    file_names = [k for k in dotenv_values(env_file) if k.startswith(ENV_PREFIX)]
    env_names = [k for k in os.environ if k.startswith(ENV_PREFIX)]
    warnings = []
    for name in dict.fromkeys([*file_names, *env_names]):
        if name in known or name in TOOL_NAMES:
            continue
        where = env_file if name in file_names else "the environment"
        closest = process.extractOne(name, known, score_cutoff=70)
        hint = f"; did you mean {closest[0]}?" if closest else ""
        warnings.append(f"{name} in {where} is not a setting and is ignored{hint}")
    return warnings


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "?"
        message = error["msg"].removeprefix("Value error, ")
        shown = "***" if field in SECRET_FIELDS else repr(error.get("input"))
        parts.append(f"{ENV_PREFIX}{field.upper()}: {message} (got {shown})")
    return "invalid configuration: " + "; ".join(parts)
