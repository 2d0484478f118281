"""Plain-HTTP connections straight on asyncio, for the Fetcher's `http` client.

httpx's async client reaches the network through httpcore's anyio backend, which wraps every
read and write in an anyio cancel scope, maps exceptions through context managers and rebuilds
a dict of socket attributes each time httpcore asks whether a pooled connection is still
readable. On a loopback agent that is about a sixth of the client's CPU per request (the
interview sends eighteen). This backend does the same job on asyncio streams: `asyncio.timeout`
for each read, write and connect, the operating system's error kept as the cause (so
`explorer.net.http._reason` still finds "Connection refused"), TCP_NODELAY on as asyncio sets it
for every TCP stream, and a request's head and body sent together in one write.

It is used only for plain `http://` URLs: the https client, and with it certificate checking,
public-only pinning and SNI, keeps httpx's own backend. A plain connection is never upgraded to
TLS here; `start_tls` refuses, which httpcore would report as a connection error.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

# The stream buffer: a read returns at most what httpcore asks for (64 KiB), never more.
_BUFFER = 64 * 1024
_HAPPY_EYEBALLS_DELAY = 0.25


class _Stream(httpcore.AsyncNetworkStream):
    """One connection. Writes are held until the next read, so a request (head and body, which
    httpcore writes separately) leaves in one send: one packet and one wake-up of the agent
    instead of two. httpcore always reads the response after writing the whole request."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._write_timeout: float | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            try:
                await self._flush()
            except httpcore.WriteError:
                pass  # as httpcore does: the agent may have answered before it stopped reading
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout("timed out reading") from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        self._write_timeout = timeout
        if self._held_bytes >= _BUFFER:  # a large body goes out as it comes
            await self._flush()

    async def _flush(self) -> None:
        data = b"".join(self._held)
        self._held.clear()
        self._held_bytes = 0
        try:
            async with asyncio.timeout(self._write_timeout):
                self._writer.write(data)
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout("timed out writing") from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass  # a peer that reset the connection: it is closed either way

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("the plain-HTTP client does not start TLS")

    def get_extra_info(self, info: str) -> Any:
        sock = self._writer.get_extra_info("socket")
        if info == "is_readable":
            # An idle pooled connection that is readable was closed (or spoken to) by the server.
            return sock is None or httpcore._utils.is_socket_readable(sock)  # noqa: SLF001
        if info == "socket":
            return sock
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio streams (plain TCP only)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple[int, int, int | bytes] | tuple[int, int, None, int]] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if not 0 <= port <= 65535:
            # An agent's URL can name any port; asyncio would fail on it outside OSError (an
            # OverflowError, or an IndexError from the happy-eyeballs race), ending the run.
            raise httpcore.ConnectError(f"port {port} is outside 0-65535")
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    limit=_BUFFER,
                    local_addr=(local_address, 0) if local_address else None,
                    # Like anyio's connect: a host with an unreachable IPv6 address and a working
                    # IPv4 one is not stuck on the first until the timeout (RFC 8305).
                    happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY,
                )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout("timed out connecting") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return _Stream(reader, writer)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the explorer")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def plain_transport(
    limits: httpx.Limits, verify: ssl.SSLContext | bool, *, trust_env: bool
) -> httpx.AsyncHTTPTransport:
    """httpx's transport for plain HTTP, its connection pool on `AsyncioBackend`.

    httpx offers no public way to choose the network backend, so the transport's pool is
    replaced by an identical one (same limits) built with it; if a future httpx lays the
    transport out differently, its own pool is kept and only the speed-up is lost."""
    transport = httpx.AsyncHTTPTransport(verify=verify, limits=limits, trust_env=trust_env)
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(  # noqa: SLF001
            ssl_context=verify if isinstance(verify, ssl.SSLContext) else None,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioBackend(),
        )
    return transport
