"""Builds the object graph from Settings. No module-level singletons: tests build their own."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from sommelier.agent.context import counter_for
from sommelier.agent.llm import ModelClient, OpenAIModel
from sommelier.agent.loop import Agent, AgentLimits
from sommelier.catalog.starter import load_starter_catalog_if_empty
from sommelier.catalog.tools import catalog_tools
from sommelier.chat.reply import ReplySpec
from sommelier.chat.service import ChatOptions, ChatService
from sommelier.chat.summary import summarize_request
from sommelier.config import Settings
from sommelier.db.migrate import upgrade
from sommelier.db.session import create_engine, session_factory
from sommelier.observability.langfuse_tracer import tracer_from_environment
from sommelier.observability.tracing import Tracer


@dataclass
class App:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    _closers: list = field(default_factory=list)
    _tracer: Tracer | None = None

    @classmethod
    def build(cls, settings: Settings) -> App:
        engine = create_engine(settings.database_url, echo=settings.database_echo)
        return cls(settings=settings, engine=engine, sessions=session_factory(engine))

    async def prepare(self) -> None:
        """Migrations and the starter catalog, so every command works on a fresh machine."""
        if self.settings.auto_migrate:
            await upgrade(self.settings.database_url)
        if self.settings.load_starter_catalog:
            await load_starter_catalog_if_empty(self.sessions)

    def model(self) -> OpenAIModel:
        s = self.settings
        model = OpenAIModel(
            base_url=s.llm_base_url,
            api_key=s.llm_api_key,
            model=s.llm_model,
            connect_timeout=s.llm_connect_timeout,
            read_timeout=s.llm_read_timeout,
            write_timeout=s.llm_write_timeout,
            pool_timeout=s.llm_pool_timeout,
            network_retries=s.llm_network_retries,
            response_format=s.llm_response_format,
            temperature=s.llm_temperature,
        )
        self._closers.append(model.aclose)
        return model

    def tracer(self) -> Tracer:
        """Langfuse when its keys are in the environment; otherwise tracing is off."""
        if self._tracer is None:
            self._tracer = tracer_from_environment(mask=self.settings.trace_mask_text)

            async def shutdown() -> None:
                await asyncio.to_thread(self._tracer.shutdown)  # type: ignore[union-attr]

            self._closers.append(shutdown)
        return self._tracer

    def chat_service(
        self, model: ModelClient | None = None, tracer: Tracer | None = None
    ) -> ChatService:
        """The sommelier over this app's database, with the configured (or a given) model."""
        s = self.settings
        model = model or self.model()
        agent = Agent(
            model,
            catalog_tools(self.sessions),
            ReplySpec(),
            limits=AgentLimits(
                max_iterations=s.agent_max_iterations,
                max_retries=s.structured_output_max_retries,
                max_output_tokens=s.llm_max_output_tokens,
                context_tokens=s.llm_context_tokens,
                compaction=s.recovery_compaction,
            ),
            summarize=summarize_request,
            counter=counter_for(model.model),
            protocol=str(s.output_protocol),
            stream_retry_delay=s.stream_retry_delay,
        )
        options = ChatOptions(
            inactivity=timedelta(hours=s.session_inactivity_hours),
            history_max_chars=s.history_max_chars,
            history_max_messages=s.history_max_messages,
            mask_text=s.trace_mask_text,
            protocol=str(s.output_protocol),
        )
        return ChatService(self.sessions, agent, options, tracer or self.tracer())

    async def aclose(self) -> None:
        for closer in reversed(self._closers):
            await closer()
        await self.engine.dispose()
