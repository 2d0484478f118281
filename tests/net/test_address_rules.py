"""Where the explorer may go, and what a list may make it read (issue 21 item 6).

- `--public-only` refuses IPv6 forms that carry a loopback or private IPv4 address (NAT64, local
  NAT64, 6to4, Teredo, IPv4-compatible, IPv4-mapped and -translated) and site-local addresses.
  Only the filter's decision is tested, and the URL form of it (`resolve_public` on a literal,
  which asks no resolver): no test sends a packet to such an address.
- `*.localhost` is not loopback for secrets: a plain-HTTP token URL or `jku` there is refused (a
  resolver may send the name upstream), decided before any lookup.
- A trust root over plain HTTP (`--keys`, `--trust-runner`) is fetched only from a loopback
  address, by address, never by name: against a real key server on 127.0.0.1, `localhost` is
  refused and nothing is fetched.
- A target list (`--from`) holds URLs and configured agent names; a line that is a file path is
  refused unless `--allow-files`, so a list from someone else cannot copy your files into the
  transcript and the history.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from explorer.cli import main
from explorer.core.signatures import generate_key, public_jwks
from explorer.interview.procedure import jku_refusal
from explorer.net.auth import token_url_refusal
from explorer.net.keys import KeysError, load_keys, plain_http_refusal
from explorer.net.origins import Blocked, check_address, is_loopback_host, resolve_public
from tests.support.cards import agent_card
from tests.support.http_server import base_url, send_json, serving

CARRYING_PRIVATE = [
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::c0a8:101",  # NAT64 of 192.168.1.1
    "64:ff9b:1::a00:1",  # local-use NAT64 (RFC 8215), whatever it carries
    "64:ff9b:1:ffff::808:808",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "::7f00:1",  # IPv4-compatible ::127.0.0.1
    "::a00:1",
    "::808:808",  # IPv4-compatible is deprecated: never public
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:a00:1",  # IPv4-translated of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo carrying 192.0.2.45
    "fec0::1",  # site-local
    "fec0:1234::abcd",
]
MULTICAST = [
    "224.0.0.1",  # all hosts on this link
    "239.255.255.250",  # organisation-local scope (SSDP)
    "233.252.0.1",  # a globally scoped group is still a group, not a host
    "ff02::1",  # link-local scope
    "ff05::2",  # site-local scope
    "ff0e::1",  # global scope
    "64:ff9b::e000:1",  # NAT64 of 224.0.0.1
    "2002:effe:fffa::1",  # 6to4 of 239.254.255.250
    "::ffff:224.0.0.1",  # IPv4-mapped
]
CARRYING_PUBLIC = ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", CARRYING_PRIVATE)
def test_public_only_refuses_ipv6_forms_that_carry_a_private_address(address: str) -> None:
    with pytest.raises(Blocked, match="not a public address"):
        check_address(address)
    with pytest.raises(Blocked, match="not a public address"):  # the URL form: refused before any connect
        asyncio.run(resolve_public(f"https://[{address}]/.well-known/agent-card.json"))


@pytest.mark.parametrize("address", MULTICAST)
def test_public_only_refuses_multicast_groups_which_python_calls_global(address: str) -> None:
    with pytest.raises(Blocked, match="not a public address"):
        check_address(address)
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(Blocked, match="not a public address"):  # a literal: no resolver, no packet
        asyncio.run(resolve_public(f"https://{host}/.well-known/agent-card.json"))


@pytest.mark.parametrize("address", CARRYING_PUBLIC)
def test_public_only_still_takes_ipv6_forms_of_public_addresses(address: str) -> None:
    check_address(address)
    pin = asyncio.run(resolve_public(f"https://[{address}]/card.json"))  # a literal: no resolver asked
    assert pin.port == 443


def test_a_name_under_localhost_is_not_loopback_for_secrets() -> None:
    for url in (
        "http://idp.localhost:8080/token",
        "http://a.b.localhost/token",
        "http://localhost.example/t",
    ):
        assert not is_loopback_host(url)
        assert "plain http only on loopback" in (token_url_refusal(url) or "")
        assert jku_refusal(url.replace("/token", "/jwks.json").replace("/t", "/jwks.json")) is not None
    for url in ("http://localhost:8080/token", "http://127.0.0.1:8080/token", "http://[::1]:8080/token"):
        assert is_loopback_host(url) and token_url_refusal(url) is None and jku_refusal(url) is None


def test_a_trust_root_over_plain_http_only_from_a_loopback_address() -> None:
    assert plain_http_refusal("http://127.0.0.1:8080/keys.jwks") is None
    assert plain_http_refusal("http://127.9.9.9/keys.jwks") is None
    assert plain_http_refusal("http://[::1]:8080/keys.jwks") is None
    assert plain_http_refusal("http://[::ffff:127.0.0.1]:8080/keys.jwks") is None
    assert plain_http_refusal("https://keys.example/keys.jwks") is None
    for url in ("http://localhost:8080/k.jwks", "http://keys.localhost/k.jwks", "http://keys.example/k.jwks",
                "http://10.0.0.1/k.jwks", "http://[64:ff9b::7f00:1]/k.jwks"):  # fmt: skip
        assert "only from a loopback address" in (plain_http_refusal(url) or ""), url


class _KeyServer(BaseHTTPRequestHandler):
    jwks: ClassVar[dict[str, Any]] = {}
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        send_json(self, self.jwks)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def key_server() -> Iterator[int]:
    _KeyServer.jwks = public_jwks(generate_key("ES256", kid="k1"))
    _KeyServer.hits = []
    with serving(_KeyServer) as server:
        yield int(base_url(server).rsplit(":", 1)[1])


def test_keys_by_loopback_address_are_fetched_by_name_refused(key_server: int) -> None:
    loaded, _ = asyncio.run(load_keys([f"http://127.0.0.1:{key_server}/keys.jwks"]))
    assert [k["kid"] for k in loaded["keys"]] == ["k1"] and _KeyServer.hits == ["/keys.jwks"]
    with pytest.raises(KeysError, match="only from a loopback address"):
        asyncio.run(load_keys([f"http://localhost:{key_server}/keys.jwks"]))
    assert _KeyServer.hits == ["/keys.jwks"]  # nothing fetched by name


def test_keys_and_trusted_runners_named_by_a_plain_http_name_are_a_usage_error(
    key_server: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps(agent_card("Plain", url=None, interview=False)), encoding="utf-8")
    by_name = f"http://localhost:{key_server}/keys.jwks"
    out = tmp_path / "transcripts"
    assert main(["verify", str(card), "--keys", by_name, "--no-history", "--transcripts", str(out)]) == 2
    assert "only from a loopback address" in capsys.readouterr().err
    assert main(["verify", str(card), "--no-history", "--transcripts", str(out)]) == 4
    transcript = next(out.glob("*.json"))
    capsys.readouterr()
    assert main(["verify", "--offline", str(transcript), "--trust-runner", by_name]) == 2
    assert "only from a loopback address" in capsys.readouterr().err
    assert _KeyServer.hits == []
    by_address = f"http://127.0.0.1:{key_server}/keys.jwks"
    assert main(["verify", "--offline", str(transcript), "--trust-runner", by_address]) == 4
    assert _KeyServer.hits == ["/keys.jwks"]


# --- what a target list may name ----------------------------------------------------------------


@pytest.fixture
def private_file(tmp_path: Path) -> Path:
    path = tmp_path / "passwd"
    path.write_text('{"name": "root:x:0:0:private-line-7Q:/root:/bin/bash"}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [["verify", "--json"], ["watch", "--count", "1", "--every", "1"]])
def test_a_list_line_that_is_a_file_is_refused_and_nothing_is_read(
    private_file: Path, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for line in (str(private_file), f"./{private_file.name}", "~/.ssh/id_rsa", f"file://{private_file}"):
        listed = tmp_path / "agents.txt"
        listed.write_text(f"http://127.0.0.1:9/\n{line}\n", encoding="utf-8")
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            code = main([command[0], "--from", str(listed), *command[1:]])
        finally:
            os.chdir(cwd)
        out, err = capsys.readouterr()
        assert code == 2, (line, err)
        assert "target 2 of the list" in err and "--allow-files" in err
        assert "private-line-7Q" not in out + err
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    assert not any(b"private-line-7Q" in p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_allow_files_reads_card_files_from_a_list_and_names_of_agents_are_not_files(
    private_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = tmp_path / "agents.txt"
    listed.write_text(f"{private_file}\n", encoding="utf-8")
    assert main(["verify", "--from", str(listed), "--allow-files", "--json", "--no-history"]) == 4
    assert json.loads(capsys.readouterr().out)["card"]["discovered_via"] == "file"
    # A configured agent's name is a target even where a file of that name exists.
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    (home / "config.toml").write_text('[agents.passwd]\nurl = "http://127.0.0.1:9/"\n', encoding="utf-8")
    listed.write_text("passwd\nhttp://127.0.0.1:9/other\n", encoding="utf-8")
    cwd = Path.cwd()
    os.chdir(tmp_path)  # where `passwd` is also a file
    try:
        code = main(["verify", "--from", str(listed), "--json", "--no-history", "--timeout", "1"])
    finally:
        os.chdir(cwd)
        (home / "config.toml").unlink()
    out = capsys.readouterr().out
    assert code == 3 and "private-line-7Q" not in out
    targets = {r["target"] for r in map(json.loads, out.splitlines())}
    assert targets == {"http://127.0.0.1:9/", "http://127.0.0.1:9/other"}


def test_the_explorer_opened_on_a_list_refuses_a_file_line_too(private_file: Path, tmp_path: Path) -> None:
    from explorer.cli import _tui_parser
    from explorer.tui.launch import LaunchError, build_app

    listed = tmp_path / "agents.txt"
    listed.write_text(f"http://127.0.0.1:9/a\n{private_file}\n", encoding="utf-8")
    with pytest.raises(LaunchError, match="target 2 of the list.*--allow-files"):
        build_app(_tui_parser().parse_args(["--from", str(listed)]))
    app = build_app(_tui_parser().parse_args(["--from", str(listed), "--allow-files"]))
    assert app.start.fleet == ("http://127.0.0.1:9/a", str(private_file))
