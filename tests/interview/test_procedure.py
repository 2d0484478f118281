"""The procedure's own guarantees, against tiny loopback servers: time, secrets, cancellation.

A hanging agent ends within about twice the timeout, user headers never reach a jku or
proposal host on another origin (and are redacted in the transcript), a jku is fetched only
when allowed, a running interview can be cancelled, and bad targets are reported, not raised.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from explorer.core.report import validate_report
from explorer.core.run import REDACTED
from explorer.interview.options import Options
from explorer.interview.procedure import MAX_PROPOSALS, Progress, jku_refusal, run_interview
from tests.support.cards import agent_card
from tests.support.http_server import base_url, serving


def _codes(items: list[dict[str, Any]]) -> set[str]:
    return {f["code"] for f in items}


# --- our own servers: timing, secrets, cancellation ------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class _Site:
    """A loopback site serving a card whose JSON-RPC endpoint hangs or echoes; logs headers."""

    def __init__(self, other_origin: str = "", hang: bool = True) -> None:
        self.hang = hang
        self.other_origin = other_origin
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.base = ""
        self.proposals = 1
        self.jku_scheme = ""
        # With `hold_documents`, the key set and proposals are answered only once a question came.
        self.hold_documents = False
        self.question_came = threading.Event()

    def card(self) -> dict[str, Any]:
        protected = _b64url(
            json.dumps(
                {"alg": "ES256", "kid": "k", "jku": self.jku_scheme + self.other_origin + "/keys.jwks"}
            ).encode()
        )
        proposals = [
            {"url": f"{self.other_origin}/p{i or ''}.sow.json", "digest": "sha256:" + "0" * 64}
            for i in range(self.proposals)
        ]
        return agent_card(
            "Site",
            url=self.base + "/rpc",
            terms=proposals,
            signatures=[{"protected": protected, "signature": "AAAA"}],
        )


@pytest.fixture
def site() -> Iterator[_Site]:
    state = _Site()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            state.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            if self.command == "POST":
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/rpc":
                state.question_came.set()
            elif state.hold_documents and self.path in ("/keys.jwks", "/p.sow.json"):
                state.question_came.wait(5)
            if self.path == "/.well-known/agent-card.json":
                body = json.dumps(state.card()).encode()
            elif self.path == "/rpc" and state.hang:
                time.sleep(4)
                return
            else:
                body = b"{}"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply  # noqa: N815 (stdlib names)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as server:
        port = server.server_address[1]
        state.base = base_url(server)
        state.other_origin = f"http://localhost:{port}"  # same server, another origin
        yield state


async def test_a_hanging_agent_ends_within_twice_the_timeout(site: _Site) -> None:
    t0 = time.monotonic()
    run = await run_interview(site.base, Options(timeout=1.0, reruns=1))
    elapsed = time.monotonic() - t0
    assert run.report["verdict"] == "unreachable"
    assert elapsed < 2.6, elapsed
    asks = [e for e in run.exchanges if e.purpose.startswith("ask:")]
    assert len(asks) == 5 and all(e.error == "timeout" for e in asks)
    assert not [e for e in run.exchanges if e.purpose.startswith("probe:")]
    assert "timeout" in _codes(run.report["findings"])


async def test_secrets_reach_only_the_card_origin(site: _Site) -> None:
    site.hang = False
    options = Options(timeout=2.0, reruns=0, allow_jku=True, headers=(("Authorization", "Bearer s3cret"),))
    run = await run_interview(site.base, options)
    by_path = {}
    for path, headers in site.seen:
        by_path.setdefault(path, []).append(headers)
    assert all(h.get("authorization") == "Bearer s3cret" for h in by_path["/rpc"])
    assert all("authorization" not in h for h in by_path["/keys.jwks"])
    assert all("authorization" not in h for h in by_path["/p.sow.json"])
    assert {e.purpose for e in run.exchanges} >= {"jwks", "proposal"}
    for ex in run.exchanges:
        for name, value in ex.request_headers:
            assert "s3cret" not in value
            if name.lower() == "authorization":
                assert value == REDACTED
    assert "s3cret" not in json.dumps(run.to_transcript())


async def test_slow_key_set_and_proposal_hosts_do_not_hold_up_the_questions(site: _Site) -> None:
    # The documents are answered only after a question arrived: asked one after the other, both
    # would wait out the 2 s timeout; asked together, everything is answered.
    site.hang = False
    site.hold_documents = True
    run = await run_interview(site.base, Options(timeout=2.0, reruns=0, allow_jku=True))
    documents = [e for e in run.exchanges if e.purpose in ("jwks", "proposal")]
    assert {e.purpose for e in documents} == {"jwks", "proposal"}
    outcomes = [(e.purpose, e.status, e.error) for e in documents]
    assert all(status == 200 and error is None for _, status, error in outcomes), outcomes
    assert "timeout" not in _codes(run.report["findings"])


async def test_jku_is_not_fetched_unless_allowed(site: _Site) -> None:
    site.hang = False
    seen: list[Progress] = []
    run = await run_interview(site.base, Options(timeout=2.0, reruns=0), seen.append)
    assert "jwks" not in {e.purpose for e in run.exchanges}
    assert any(p.step == "jwks" and "--allow-jku" in p.message for p in seen)


async def test_a_running_interview_can_be_cancelled(site: _Site) -> None:
    task = asyncio.create_task(run_interview(site.base, Options(timeout=30.0)))
    await asyncio.sleep(0.5)
    task.cancel()
    t0 = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 1.0


async def test_an_unreachable_target_is_reported_not_raised() -> None:
    run = await run_interview("http://127.0.0.1:9", Options(timeout=1.0))
    assert run.report["verdict"] == "unreachable"
    assert "card_unreachable" in _codes(run.report["findings"])
    assert validate_report(dict(run.report)) == []


async def test_bad_role_is_refused() -> None:
    with pytest.raises(ValueError, match="role must be one of"):
        await run_interview("http://127.0.0.1:9", Options(role="judge"))


async def test_a_card_cannot_make_the_verifier_fetch_without_bound(site: _Site) -> None:
    site.hang = False
    site.proposals = 40
    run = await run_interview(site.base, Options(timeout=2.0, reruns=0))
    assert len([e for e in run.exchanges if e.purpose == "proposal"]) == MAX_PROPOSALS


async def test_a_jku_outside_https_or_loopback_is_not_fetched(site: _Site) -> None:
    site.hang = False
    site.jku_scheme = "ftp+"  # "ftp+http://localhost:port/keys.jwks": not https, not plain http
    seen: list[Progress] = []
    run = await run_interview(site.base, Options(timeout=2.0, reruns=0, allow_jku=True), seen.append)
    assert "jwks" not in {e.purpose for e in run.exchanges}
    assert any(p.step == "jwks" and "https" in p.message for p in seen)


def test_jku_rule() -> None:
    assert jku_refusal("https://keys.example/jwks.json") is None
    assert jku_refusal("http://127.0.0.1:8080/jwks.json") is None
    assert jku_refusal("http://localhost/jwks.json") is None
    assert jku_refusal("http://keys.example/jwks.json") is not None
    assert jku_refusal("file:///etc/passwd") is not None
