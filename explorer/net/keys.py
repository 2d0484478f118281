"""Trusted keys for card signatures, from the files and URLs the user names (`--keys`, config).

A JWKS given by the user is the trust root of the signature check, so it is read strictly and
reduced to what verification needs: public keys only. Private members (`d`, `p`, `q`, ...)
are dropped so a private key pasted by mistake never reaches a transcript or the history,
and symmetric (`oct`) keys are dropped because an HMAC "signature" proves nothing to a third
party (docs/PROTOCOL.md section 2). Every problem is a `KeysError` with a message that names the
source; nothing here returns half-read keys silently.

Fetching a key URL goes through the same bounded `Fetcher` as everything else, but is not part
of the run's exchanges: the keys themselves are kept in `Run.keys`. A key set is a trust root,
so over plain HTTP it is fetched only from a loopback address written as one (by address, never
by name): anyone on the path could otherwise swap the keys the user trusts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.core.strict_json import StrictJsonError, parse
from explorer.net.files import read_capped
from explorer.net.origins import is_loopback_address

if TYPE_CHECKING:  # the HTTP client is imported only when a key URL is fetched (files need none)
    from explorer.net.http import Fetcher, Limits

PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
MAX_KEYS_BYTES = 1024 * 1024


class KeysError(Exception):
    """A key source cannot be used; the message says which one and why."""


def public_keys(data: Any, source: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The public keys of a JWKS (or of a single JWK), plus notes on what was dropped."""
    if isinstance(data, Mapping) and "keys" in data:
        keys = data["keys"]
        if not isinstance(keys, list):
            raise KeysError(f"{source}: 'keys' must be a list of JWKs")
    elif isinstance(data, Mapping) and "kty" in data:
        keys = [data]
    else:
        raise KeysError(f"{source}: not a JWKS (an object with a 'keys' list) or a JWK")
    kept: list[dict[str, Any]] = []
    notes: list[str] = []
    for index, key in enumerate(keys):
        where = f"{source} key {index}"
        if not isinstance(key, Mapping) or not isinstance(key.get("kty"), str):
            raise KeysError(f"{where}: not a JWK (an object with a string 'kty')")
        kid = key.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise KeysError(f"{where}: 'kid' must be a string")
        label = f"{where} (kid {kid!r})" if kid else where
        if key["kty"] == "oct":
            notes.append(f"{label}: symmetric (oct) key dropped; it cannot prove a signature to anyone else")
            continue
        private = sorted(PRIVATE_MEMBERS & set(key))
        if private:
            notes.append(
                f"{label}: private members {', '.join(private)} dropped; only the public key is kept"
            )
        kept.append({name: value for name, value in key.items() if name not in PRIVATE_MEMBERS})
    return kept, notes


def _decode(data: bytes, source: str) -> Any:
    try:
        return parse(data, max_bytes=MAX_KEYS_BYTES)
    except StrictJsonError as exc:
        raise KeysError(f"{source}: not valid JSON ({exc})") from None


def _read_file(source: str) -> bytes:
    path = Path(source).expanduser()
    try:
        data, too_large = read_capped(path, MAX_KEYS_BYTES)
    except FileNotFoundError:
        raise KeysError(f"{source}: no such file") from None
    except OSError as exc:
        raise KeysError(f"{source}: cannot read it ({exc.strerror or exc})") from None
    if too_large:
        raise KeysError(f"{source}: larger than {MAX_KEYS_BYTES} bytes; not a key set")
    return data


async def _fetch(fetcher: Fetcher, source: str) -> bytes:
    ex = await fetcher.get(source, purpose="keys")
    problem = ex.problem()
    if problem is not None:
        fault = f"cannot fetch it ({problem})" if ex.error is not None else f"the server answered {problem}"
        raise KeysError(f"{source}: {fault}")
    return ex.response_body


def _is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def plain_http_refusal(source: str) -> str | None:
    """Why a key set may not be fetched from this URL: over plain HTTP, anyone on the path could
    swap the keys you trust, so only from a loopback address (by address, never by name)."""
    if not source.lower().startswith("http://") or is_loopback_address(source):
        return None
    return (
        f"{source}: a trusted key set is fetched over plain HTTP only from a loopback address "
        "(http://127.0.0.1:PORT/..., http://[::1]:PORT/...); use https"
    )


def merge(sets: Iterable[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """One JWKS from several; an exact duplicate key is kept once, order preserved."""
    out: list[dict[str, Any]] = []
    for keys in sets:
        for key in keys:
            if dict(key) not in out:
                out.append(dict(key))
    return {"keys": out}


async def load_keys(sources: Sequence[str], limits: Limits | None = None) -> tuple[dict[str, Any], list[str]]:
    """Load and merge the public keys of every source (file paths or http(s) URLs).

    `limits` gives the timeout and the public-only rule; the size cap is always this module's
    (a key set is small), whatever the caller's limits say. Returns (jwks, notes); raises
    KeysError on the first unusable source.
    """
    sets: list[list[dict[str, Any]]] = []
    notes: list[str] = []
    urls = [s for s in sources if _is_url(s)]
    for url in urls:
        refusal = plain_http_refusal(url)
        if refusal is not None:
            raise KeysError(refusal)
    fetched: dict[str, bytes] = {}
    if urls:
        from explorer.net.http import Fetcher, Limits

        capped = replace(limits or Limits(timeout=10.0), max_bytes=MAX_KEYS_BYTES)
        async with Fetcher(capped) as fetcher:
            for url in urls:
                fetched[url] = await _fetch(fetcher, url)
    for source in sources:
        data = fetched[source] if source in fetched else _read_file(source)
        keys, dropped = public_keys(_decode(data, source), source)
        sets.append(keys)
        notes.extend(dropped)
    return merge(sets), notes


def load_keys_sync(sources: Sequence[str], limits: Limits | None = None) -> tuple[dict[str, Any], list[str]]:
    """`load_keys` for synchronous callers (not from inside a running event loop)."""
    if not any(_is_url(s) for s in sources):  # files only: no event loop needed (the TUI's thread has one)
        sets, notes = [], []
        for source in sources:
            keys, dropped = public_keys(_decode(_read_file(source), source), source)
            sets.append(keys)
            notes.extend(dropped)
        return merge(sets), notes
    import asyncio

    return asyncio.run(load_keys(sources, limits))


def user_keys(
    items: Sequence[Any], loaded: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The user's keys as one public JWKS: `loaded` (what `load_keys` made of the sources among
    `items`) and every JWKS or JWK object among `items`, reduced to public keys. Raises KeysError."""
    sets: list[Sequence[Mapping[str, Any]]] = [list((loaded or {}).get("keys") or [])]
    notes: list[str] = []
    for index, item in enumerate(i for i in items if not isinstance(i, str)):
        keys, dropped = public_keys(item, f"key set {index + 1}")
        sets.append(keys)
        notes.extend(dropped)
    return merge(sets), notes
