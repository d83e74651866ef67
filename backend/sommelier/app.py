"""Builds the object graph from Settings. No module-level singletons: tests build their own.

The model client, the chat stack, tracing and MCP are imported by the methods that build them:
a catalog command pays for none of them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from sommelier.agent.profile import UNCHECKED, EndpointProfile, FormatMode, Strategy
from sommelier.config import AgentStrategy, ConfigError, ResponseFormatMode, Settings, WineSentence
from sommelier.db import repositories as repo
from sommelier.db.session import create_engine, session_factory

if TYPE_CHECKING:
    from sommelier.agent.admission import EndpointQueue
    from sommelier.agent.loop import Agent
    from sommelier.agent.model import ModelClient
    from sommelier.agent.openai_client import OpenAIModel
    from sommelier.agent.probe import Check
    from sommelier.catalog.tools import CatalogTools
    from sommelier.chat.service import ChatOptions, ChatService
    from sommelier.mcp_tools.remote import RemoteTools
    from sommelier.observability.tracing import Tracer

STALE_MARGIN = 60.0  # seconds past the longest a turn can take
STALE_WITHOUT_DEADLINE = 1800.0  # seconds, with SOMMELIER_TURN_TIMEOUT=0 (no deadline)


@dataclass
class App:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    _closers: list = field(default_factory=list)
    _tracer: Tracer | None = None
    profile: EndpointProfile = UNCHECKED
    remote: RemoteTools | None = None  # tools of the MCP servers in SOMMELIER_MCP_SERVERS
    _admission: EndpointQueue | None = None
    _model: tuple[Settings, OpenAIModel] | None = None
    _warming: asyncio.Task[None] | None = None

    @classmethod
    def build(cls, settings: Settings) -> App:
        engine = create_engine(settings.database_url, echo=settings.database_echo)
        return cls(settings=settings, engine=engine, sessions=session_factory(engine))

    async def prepare(self, *, chats: bool = True) -> None:
        """Migrations and the starter catalog, so every command works on a fresh machine; for a
        command that chats (`chats`), the model's stored profile, the MCP servers and the
        language models (loading in the background)."""
        from sommelier.catalog.starter import load_starter_catalog_if_empty
        from sommelier.db.migrate import upgrade

        if self.settings.auto_migrate:
            await upgrade(self.settings.database_url)
        if self.settings.load_starter_catalog:
            await load_starter_catalog_if_empty(self.sessions)
        if not chats:
            return
        self.profile = await self.load_profile()
        if self.settings.mcp_servers and self.remote is None:
            await self.connect_mcp()
        if self._warming is None:
            from sommelier.i18n.languages import warm

            # In the background: a person's first message should not wait for the language
            # models to load, nor should the start.
            self._warming = asyncio.create_task(asyncio.to_thread(warm))

    async def warmed(self) -> None:
        """Wait until the language models are loaded. Loading holds the GIL for about 3 s: a
        network call waiting meanwhile (Telegram's getMe at a bot's start) can time out."""
        if self._warming is not None:
            await self._warming

    async def connect_mcp(self) -> None:
        """Discover the configured MCP servers' tools, once, for every chat service."""
        from sommelier.catalog.tools import CatalogTools
        from sommelier.mcp_tools.remote import RemoteTools, ServerConfig

        servers = [
            ServerConfig(name, command=s.command, url=s.url, env=s.env)
            for name, s in self.settings.mcp_servers.items()
        ]
        self.remote = RemoteTools(
            self.settings.mcp_timeout, CatalogTools(self.sessions).known_wines
        )
        self._closers.append(self.remote.aclose)
        await self.remote.connect(servers)

    async def load_profile(self) -> EndpointProfile:
        """What `sommelier model check` found for the configured endpoint and model."""
        s = self.settings
        async with self.sessions() as session:
            data = await repo.load_endpoint_profile(session, s.llm_base_url, s.llm_model)
        return EndpointProfile.from_json(data) if data else UNCHECKED

    async def check_model(
        self, progress: Callable[[str], None] | None = None
    ) -> tuple[EndpointProfile, list[Check]]:
        """Probe the configured endpoint; a reachable one's profile is stored and used.
        `progress` hears each probe as it starts and ends (a small model takes seconds each)."""
        from sommelier.agent.probe import probe

        s = self.settings
        profile, checks = await probe(
            s.llm_base_url, s.llm_api_key, s.llm_model, s.llm_read_timeout, progress
        )
        if profile.reachable:
            async with self.sessions() as session, session.begin():
                await repo.save_endpoint_profile(
                    session, s.llm_base_url, s.llm_model, profile.to_json()
                )
            self.profile = profile
            self._model = None  # the next client is built for what the check found
        return profile, checks

    def strategy(self) -> Strategy:
        chosen = self.settings.agent_strategy
        if chosen != AgentStrategy.auto:
            return Strategy(chosen.value)
        # Unchecked, the planner: it works with every server, tool calls or not.
        return self.profile.strategy() if self.profile.checked else Strategy.planner

    def model(self) -> OpenAIModel:
        """The process's one client of the configured model (one connection pool), built on
        first use: after `prepare`, so it knows the endpoint's stored profile."""
        if self._model is None or self._model[0] is not self.settings:
            self._model = (self.settings, self._new_model())  # built anew for new settings
        return self._model[1]

    def _new_model(self) -> OpenAIModel:
        from sommelier.agent.openai_client import OpenAIModel

        s = self.settings
        forced = s.llm_response_format
        model = OpenAIModel(
            base_url=s.llm_base_url,
            api_key=s.llm_api_key,
            model=s.llm_model,
            connect_timeout=s.llm_connect_timeout,
            read_timeout=s.llm_read_timeout,
            write_timeout=s.llm_write_timeout,
            pool_timeout=s.llm_pool_timeout,
            network_retries=s.llm_network_retries,
            response_format=None if forced == ResponseFormatMode.auto else FormatMode(forced.value),
            temperature=s.llm_temperature,
            profile=self.profile,
        )
        self._closers.append(model.aclose)
        return model

    def stale_after(self) -> timedelta:
        """How long a turn can run at most, its wait for the model included: a turn still
        `received` after that was cut short (db/turns.py `sweep`)."""
        s = self.settings
        longest = (s.turn_timeout or STALE_WITHOUT_DEADLINE) + s.queue_wait
        return timedelta(seconds=longest + STALE_MARGIN)

    def admission(self) -> EndpointQueue:
        """The model endpoint's queue, shared by every chat service: on PostgreSQL by every
        process using the database (several workers, one endpoint), else by this process's."""
        if self._admission is None:
            s = self.settings
            capacity = s.llm_concurrency or self.profile.concurrency or 1
            if self.engine.dialect.name == "postgresql":
                from sommelier.chat.model_queue import SharedAdmission

                endpoint = f"{s.llm_base_url} {s.llm_model}"
                shared = SharedAdmission(self.sessions, endpoint, capacity, s.queue_wait)
                self._closers.append(shared.aclose)
                self._admission = shared
            else:
                from sommelier.agent.admission import Admission

                self._admission = Admission(capacity, wait_limit=s.queue_wait)
        return self._admission

    def tracer(self) -> Tracer:
        """Langfuse when its keys are in the environment; otherwise tracing is off."""
        from sommelier.observability.langfuse_tracer import tracer_from_environment

        if self._tracer is None:
            tracer = self._tracer = tracer_from_environment(mask=self.settings.trace_mask_text)

            async def shutdown() -> None:
                await asyncio.to_thread(tracer.shutdown)

            self._closers.append(shutdown)
        return self._tracer

    def chat_service(
        self, model: ModelClient | None = None, tracer: Tracer | None = None
    ) -> ChatService:
        """The sommelier over this app's database, with the configured (or a given) model."""
        from sommelier.catalog.tools import CatalogTools
        from sommelier.chat.service import ChatService

        model = model or self.model()
        catalog = CatalogTools(self.sessions)
        return ChatService(
            self.sessions,
            self._agent(model, catalog),
            self.chat_options(),
            tracer or self.tracer(),
            catalog=catalog,
            admission=self.admission(),
        )

    def _agent(self, model: ModelClient, catalog: CatalogTools) -> Agent:
        """The agent: the catalog's tools, the knowledge table, the MCP servers' tools, the
        sommelier's policy and answer; its prompt checked against the context window."""
        from sommelier.agent.context import counter_for
        from sommelier.agent.loop import Agent, AgentLimits, ContextTooSmall
        from sommelier.agent.protocols import PROTOCOLS
        from sommelier.cellar.adding import Adding
        from sommelier.chat.guard import REPLIES
        from sommelier.chat.knowledge import Knowledge
        from sommelier.chat.policy import SommelierPolicy
        from sommelier.chat.prompts import system_prompt
        from sommelier.chat.reply import ReplySpec
        from sommelier.chat.summary import summarize_request

        s = self.settings
        tools = catalog.registry()
        tools.add(Knowledge(catalog).tool())
        tools.add(Adding(catalog).tool())
        for remote in self.remote.tools if self.remote else []:
            tools.add(remote)
        agent = Agent(
            model,
            tools,
            ReplySpec(own_sentence=s.wine_sentence == WineSentence.model),
            limits=AgentLimits(
                max_iterations=s.agent_max_iterations,
                max_retries=s.structured_output_max_retries,
                max_output_tokens=s.llm_max_output_tokens,
                context_tokens=s.llm_context_tokens,
                compaction=s.recovery_compaction,
                turn_seconds=s.turn_timeout or None,
                clarify_below=s.agent_clarify_below,
            ),
            summarize=summarize_request,
            protocol=PROTOCOLS[str(s.output_protocol)],
            strategy=self.strategy(),
            policy=SommelierPolicy(catalog, screen=s.screen),
            counter=counter_for(model.model),
            stream_retry_delay=s.stream_retry_delay,
            replies=REPLIES,
        )
        try:
            agent.fit_window(system_prompt())
        except ContextTooSmall as exc:
            raise ConfigError(
                f"SOMMELIER_LLM_CONTEXT_TOKENS={s.llm_context_tokens}: {exc}; raise it to at "
                f"least {exc.needed}"
            ) from None
        return agent

    def chat_options(self) -> ChatOptions:
        from sommelier.chat.service import ChatOptions

        s = self.settings
        return ChatOptions(
            inactivity=timedelta(hours=s.session_inactivity_hours),
            history_max_chars=s.history_max_chars,
            history_max_messages=s.history_max_messages,
            mask_text=s.trace_mask_text,
            protocol=str(s.output_protocol),
        )

    async def aclose(self) -> None:
        for closer in reversed(self._closers):
            await closer()
        await self.engine.dispose()
