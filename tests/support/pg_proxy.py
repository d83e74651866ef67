"""A TCP proxy in front of the PostgreSQL server that a test can cut and restore: the database
"goes away" mid-turn, for this test's connections only (the shared server keeps running)."""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy.engine import make_url


class Proxy:
    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        self.target = (parsed.host or "127.0.0.1", parsed.port or 5432)
        self.url = url
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def proxied_url(self) -> str:
        return make_url(self.url).set(host="127.0.0.1", port=self.port).render_as_string(False)

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def cut(self) -> None:
        """New connections are refused and open ones broken, as when the server stops."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._open):
            writer.close()
        self._open.clear()

    async def restore(self) -> None:
        await self.start()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._open |= {writer, up_writer}
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        self._open -= {writer, up_writer}


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()
