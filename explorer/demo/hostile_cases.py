"""The hostile agent's case table: every way it misbehaves, and what a verifier must conclude.

Every case is an honest reference agent (the card, proposals and answers of `explorer.demo`,
built by `documents.build` and answered by `Agent`) that differs from a conformant one in
exactly one way: its card bytes, its signature, its key set, one committed proposal, one answer,
one closure probe, or the transport under one kind of request. The case table `HOSTILE_CASES`
is the single source of truth: it says what each case does and what a correct verifier must
conclude (verdict, codes that must appear, codes that must not), and the tests are parametrized
over it, so adding a row adds a test.

This module is data and document surgery only; it opens no socket. `build_site` turns a case into
the bytes it publishes, and `explorer.demo.hostile` serves them (and performs the transport
cases, named here by `Wire.kind`). Every case is signed with one suite key (`KEY_NAME`), so a
verifier given that key set can tell a broken signature from a missing key.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import hmac
import json
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from explorer.core import signatures
from explorer.core.canonical import canonicalize, digest
from explorer.core.card import TERMS_URI
from explorer.demo import content, documents
from explorer.demo.agent import Agent
from explorer.demo.jsonrpc import dumps, error_body, result_body
from explorer.demo.projection import Committed
from explorer.demo.ratelimit import RateLimit, RateLimiter
from explorer.demo.variants import Variant, Verdict

KEY_NAME = "hostile-suite"
DEEP = 10_000  # nesting depth of the "deep" cases, far past the verifier's cap
MARKUP = content.MARKUP
ANSI = content.ANSI
TRAP = "[@click=app.quit]"  # the markup a TUI test looks for, verbatim, on screen

Layer = Literal["card", "jwks", "proposal", "answer", "probe", "transport"]
Where = Literal["card", "rpc", "jwks", "proposal"]


# --- what a case is --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    """A transport behaviour for one kind of request (`where`); the rest are served honestly."""

    where: Where
    kind: str
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    location: str = ""  # redirects: "other-host", "self" or "private"


@dataclass
class Site:
    """One case's published state: honest documents, with the case's one edit applied."""

    case: HostileCase
    urls: documents.Urls
    docs: documents.Documents
    agent: Agent
    card_body: bytes
    jwks_body: bytes

    @property
    def base_path(self) -> str:
        """The case's path prefix on the server (`/case/<name>`)."""
        return urlsplit(self.urls.base).path


CardEdit = Callable[[dict[str, Any], "Build"], None]
Resign = Callable[[dict[str, Any], "Build"], list[dict[str, Any]]]
BodyEdit = Callable[[bytes], bytes]
AnswerEdit = Callable[[dict[str, Any], Any], bytes]
ProposalEdit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class HostileCase:
    """One way to misbehave, and what a correct verifier concludes about it.

    `expected_codes` must all appear in the report's findings; `forbidden_codes` must not.
    `trust_keys`: the verifier is given the suite's card key set (`--keys`); `allow_jku` and
    `public_only` are the verifier options the case needs. `slow` marks cases that make the
    verifier wait out its timeout (the tests run those concurrently); `shows` is agent text a
    screen must draw literally (markup as text, escapes made visible): the TUI tests load every
    case that has one.

    The behaviour switches, at most one layer each (all None is a conformant agent):
    `edit_card` edits the unsigned card; `resign` replaces its signatures; `serve_card` rewrites
    the card bytes as served; `serve_jwks` replaces the key set bytes; `edit_proposal` edits the
    last committed proposal as served (the card commits to the edited bytes); `edit_digest`
    rewrites the first terms entry's digest (in the card and in the answers that cite it);
    `answer` replaces the response body of one question, `probe` the undefined-method probe's;
    `wire` misbehaves at the transport under one kind of request.
    """

    name: str
    layer: Layer
    description: str
    expected_verdict: Verdict
    expected_codes: frozenset[str] = frozenset()
    forbidden_codes: frozenset[str] = frozenset()
    trust_keys: bool = True
    allow_jku: bool = False
    public_only: bool = False
    slow: bool = False
    shows: str | None = None
    edit_card: CardEdit | None = None
    resign: Resign | None = None
    serve_card: BodyEdit | None = None
    serve_jwks: bytes | None = None
    edit_proposal: ProposalEdit | None = None
    edit_digest: Callable[[str, dict[str, Any]], str] | None = None
    answer: tuple[str, AnswerEdit] | None = None
    probe: AnswerEdit | None = None
    wire: Wire | None = None


@dataclass(frozen=True)
class Build:
    """What a card edit or a re-signing may use: where the case lives and the suite's key."""

    urls: documents.Urls
    key: documents.CardKey


# --- byte surgery on honest JSON -------------------------------------------------------------------


def _insert_member(body: bytes, raw_member: bytes) -> bytes:
    """An object's bytes with `raw_member` (e.g. b'"x":NaN') spliced in as its first member."""
    if not body.startswith(b"{"):
        raise ValueError("expected a JSON object")
    return b"{" + raw_member + b"," + body[1:]


def _deep(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def _with_first_value(answer_doc: dict[str, Any], raw: bytes) -> bytes:
    """The answer serialised with its first projection's value replaced by raw bytes."""
    doc = copy.deepcopy(answer_doc)
    sentinel = "\x00hostile-value\x00"
    doc["projections"][0]["value"] = sentinel
    return dumps(doc).replace(dumps(sentinel), raw, 1)


def _with_first_member(answer_doc: dict[str, Any], member: str) -> dict[str, Any]:
    doc = copy.deepcopy(answer_doc)
    doc["projections"][0]["source"]["member"] = member
    return doc


def _raw_result(raw: bytes) -> AnswerEdit:
    return lambda _answer, request_id: result_body(request_id, raw)


def _value(raw: bytes) -> AnswerEdit:
    return lambda answer_doc, request_id: result_body(request_id, _with_first_value(answer_doc, raw))


def _pointer(member: str) -> AnswerEdit:
    def edit(answer_doc: dict[str, Any], request_id: Any) -> bytes:
        return result_body(request_id, dumps(_with_first_member(answer_doc, member)))

    return edit


def _whole_body(make: Callable[[bytes], bytes]) -> AnswerEdit:
    """Replace the whole response body; `make` gets the honest body."""
    return lambda answer_doc, request_id: make(result_body(request_id, dumps(answer_doc)))


def _projection(answer_doc: dict[str, Any], member: str) -> dict[str, Any]:
    for proj in answer_doc["projections"]:
        if proj["source"]["member"] == member:
            return proj
    raise KeyError(f"the honest answer projects no {member}")


def _reordered_provider(answer_doc: dict[str, Any], request_id: Any) -> bytes:
    doc = copy.deepcopy(answer_doc)
    proj = _projection(doc, "/provider")
    proj["value"] = dict(reversed(list(proj["value"].items())))
    # Pretty-printed too: whitespace outside strings means nothing under JCS.
    text = json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8")
    return result_body(request_id, text)


def _floats(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


def _number_forms(answer_doc: dict[str, Any], request_id: Any) -> bytes:
    """Every integer in the terms values written as a double: `2` as `2.0`, `2500000` as `2500000.0`."""
    doc = copy.deepcopy(answer_doc)
    for proj in doc["projections"]:
        proj["value"] = _floats(proj["value"])
    return result_body(request_id, json.dumps(doc, separators=(",", ":")).encode("utf-8"))


def _escaped(answer_doc: dict[str, Any], request_id: Any) -> bytes:
    """Every non-ASCII character written as a \\u escape (and "/" as "\\/")."""
    text = json.dumps(answer_doc, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")
    return result_body(request_id, text.encode("ascii"))


def _nfd_name(answer_doc: dict[str, Any], request_id: Any) -> bytes:
    doc = copy.deepcopy(answer_doc)
    proj = _projection(doc, "/name")
    proj["value"] = unicodedata.normalize("NFD", proj["value"])
    return result_body(request_id, dumps(doc))


def _one_less(answer_doc: dict[str, Any], request_id: Any) -> bytes:
    """The provider's big integer, minus one: equal to the card's only after rounding to a double."""
    doc = copy.deepcopy(answer_doc)
    proj = _projection(doc, "/provider")
    proj["value"]["employees"] -= 1
    return result_body(request_id, dumps(doc))


def _markup_error(_answer: dict[str, Any], request_id: Any) -> bytes:
    return error_body(request_id, -32000, f"{MARKUP} {ANSI} [/] internal trouble")


def _leaky_markup(_refusal: dict[str, Any], request_id: Any) -> bytes:
    hint = {"hint": f"{MARKUP} Happy to help! {ANSI}", "methods": [f"{TRAP}interview/usage"]}
    return result_body(request_id, dumps(hint))


# --- card edits -----------------------------------------------------------------------------------

NFC_NAME = unicodedata.normalize("NFC", "Café Stonework Bücher")
UNICODE_NAME = "Café ☃ Stonework — Bücher"
BIG = 2**53 + 1  # 9007199254740993: rounds to 9007199254740992 as a double


def _set_name(name: str) -> CardEdit:
    def edit(card: dict[str, Any], _build: Build) -> None:
        card["name"] = name

    return edit


def _big_employees(card: dict[str, Any], _build: Build) -> None:
    card["provider"]["employees"] = BIG


def _markup_everywhere(card: dict[str, Any], _build: Build) -> None:
    card["name"] = f"{TRAP}Hostile[/] [bold red]Agent[/] {ANSI}"
    card["description"] = f"{MARKUP} {ANSI} {content.CONTROL} {content.BIDI}"
    card["provider"]["organization"] = f"{MARKUP} {content.BIDI}"
    for skill in card["skills"]:
        skill["name"] = f"{MARKUP} {skill['name']}"
        skill["description"] = f"{ANSI} {skill['description']} [/]"
        skill["tags"] = [MARKUP, ANSI]


def _terms_entry(card: dict[str, Any]) -> dict[str, Any]:
    for ext in card["capabilities"]["extensions"]:
        if ext.get("uri") == TERMS_URI:
            return ext
    raise KeyError("the honest card declares no terms extension")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _signing_input(header: Mapping[str, Any], card: Mapping[str, Any]) -> tuple[str, bytes]:
    protected = _b64url(json.dumps(header, separators=(",", ":")).encode("utf-8"))
    payload = signatures.payload_bytes(card, "served")
    return protected, f"{protected}.{_b64url(payload)}".encode("ascii")


def _es256(header: Mapping[str, Any]) -> Resign:
    """A genuine ES256 signature by the suite's key under a header the verifier must judge."""

    def sign(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
        protected, signing_input = _signing_input(header if header else {}, card)
        der = build.key.key.private_key.sign(signing_input, ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return [{"protected": protected, "signature": _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))}]

    return sign


def _kid_number(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
    return _es256({"alg": "ES256", "kid": 20251130, "typ": "JOSE"})(card, build)


def _huge_header(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
    header = {"alg": "ES256", "kid": build.key.kid, "typ": "JOSE", "pad": "A" * 100 * 1024}
    return _es256(header)(card, build)


def _alg_none(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
    protected, _ = _signing_input({"alg": "none", "kid": build.key.kid, "typ": "JOSE"}, card)
    return [{"protected": protected, "signature": ""}]


def _public_pem(build: Build) -> bytes:
    return build.key.key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _hs256(secret: Callable[[Build], bytes], jku: bool = False) -> Resign:
    """An HMAC "signature" whose secret an attacker knows (the public key, or a key set it serves)."""

    def sign(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
        header: dict[str, Any] = {"alg": "HS256", "kid": build.key.kid, "typ": "JOSE"}
        if jku:
            header["jku"] = build.urls.jwks
        protected, signing_input = _signing_input(header, card)
        mac = hmac.new(secret(build), signing_input, hashlib.sha256).digest()
        return [{"protected": protected, "signature": _b64url(mac)}]

    return sign


OCT_SECRET = b"a shared secret an attacker chose"


def _foreign_jku(card: dict[str, Any], build: Build) -> list[dict[str, Any]]:
    header = {"alg": "ES256", "kid": build.key.kid, "typ": "JOSE", "jku": "http://198.51.100.7/jwks.json"}
    return _es256(header)(card, build)


def _uppercase_digest(value: str, _doc: dict[str, Any]) -> str:
    return "sha256:" + value.removeprefix("sha256:").upper()


def _sha512_digest(_value: str, doc: dict[str, Any]) -> str:
    return "sha512:" + hashlib.sha512(canonicalize(doc)).hexdigest()


NKEY_NODE_PREFIX = 13 << 3  # "N...": a server (node) key, not a user key


def _nkey_raw(key: str) -> bytearray:
    return bytearray(base64.b32decode(key + "=" * (-len(key) % 8)))


def _nkey_text(raw: bytes | bytearray) -> str:
    return base64.b32encode(bytes(raw)).decode("ascii").rstrip("=")


def _bad_crc(proposal: dict[str, Any]) -> None:
    raw = _nkey_raw(proposal["signatures"][0]["key"])
    raw[-1] ^= 0x01
    proposal["signatures"][0]["key"] = _nkey_text(raw)


def _wrong_prefix(proposal: dict[str, Any]) -> None:
    raw = _nkey_raw(proposal["signatures"][0]["key"])
    body = bytes([NKEY_NODE_PREFIX]) + bytes(raw[1:33])
    crc = binascii.crc_hqx(body, 0)  # CRC-16/XMODEM, so only the prefix is wrong
    proposal["signatures"][0]["key"] = _nkey_text(body + crc.to_bytes(2, "little"))


# --- the case table --------------------------------------------------------------------------------


def _case(
    name: str,
    layer: Layer,
    description: str,
    verdict: Verdict,
    codes: Iterable[str] = (),
    forbidden: Iterable[str] = (),
    **switches: Any,
) -> HostileCase:
    return HostileCase(name, layer, description, verdict, frozenset(codes), frozenset(forbidden), **switches)


def _card_bytes(name: str, description: str, edit: BodyEdit, **switches: Any) -> HostileCase:
    return _case(name, "card", description, "unreachable", ("card_malformed",), **switches, serve_card=edit)


def _hostile_member(raw: bytes) -> BodyEdit:
    """The card's bytes with a `hostile` member holding `raw` spliced in first."""
    return lambda b: _insert_member(b, b'"hostile":' + raw)


def _bad_answer(
    name: str,
    description: str,
    edit: AnswerEdit,
    code: str = "answer_malformed",
    question: str = "identity",
    **switches: Any,
) -> HostileCase:
    # The same bad bytes on both asks (only the echoed request id differs): not nondeterminism.
    forbidden = ("nondeterministic_answer",)
    return _case(
        name, "answer", description, "nonconformant", (code,), forbidden, **switches, answer=(question, edit)
    )


_MALFORMED_VALUES: tuple[tuple[str, str, bytes], ...] = (
    ("nan", "a value is NaN", b"NaN"),
    ("infinity", "a value is -Infinity", b"-Infinity"),
    ("1e400", "a number overflows a double (1e400)", b"1e400"),
    ("lone-surrogate", "a string holds a lone surrogate escape (\\ud800)", b'"Stonework \\ud800"'),
    ("invalid-utf8", "a string holds bytes that are not UTF-8", b'"Stonework \xff\xfe"'),
    ("deep-nesting", f"a value nested {DEEP} levels deep", _deep()),
)

_TABLE: list[HostileCase] = [
    # --- the control: what every other case differs from in exactly one way --------------------
    _case(
        "honest",
        "card",
        "the base every case starts from: signed card, terms, consistent answers",
        "conformant",
    ),
    # --- the card's bytes -----------------------------------------------------------------------
    _card_bytes(
        "card-not-json", "the card is an HTML page", lambda _b: b"<html><body>Agent card</body></html>"
    ),
    _card_bytes("card-truncated", "the card stops half way", lambda b: b[: len(b) // 2]),
    _card_bytes(
        "card-duplicate-keys",
        "the card names `name` twice, with different values",
        lambda b: _insert_member(b, b'"name":"Evil twin"'),
    ),
    *[
        _card_bytes(f"card-{slug}", f"the card: {what}", _hostile_member(raw))
        for slug, what, raw in _MALFORMED_VALUES
    ],
    _card_bytes("card-array", "the card is a JSON array holding the card", lambda b: b"[" + b + b"]"),
    _card_bytes("card-string", "the card is a JSON string", lambda _b: b'"I am an agent card, trust me"'),
    _card_bytes("card-null", "the card is JSON null", lambda _b: b"null"),
    _card_bytes(
        "card-markup-duplicate-key",
        "the card repeats a key written in markup, so the refusal message quotes markup",
        lambda b: _insert_member(b, f'"{TRAP}":1,"{TRAP}":2'.encode()),
        shows=TRAP,
    ),
    # --- the card's signature and keys ----------------------------------------------------------
    _case(
        "sig-jku-other-host",
        "card",
        "the only key for the signature is behind a jku on another host, over plain http",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        trust_keys=False,
        allow_jku=True,
        resign=_foreign_jku,
    ),
    _case(
        "sig-alg-none",
        "card",
        "the card's signature says alg none (empty signature)",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        resign=_alg_none,
    ),
    _case(
        "sig-hs256-public-key",
        "card",
        "HS256 with the card key's public PEM as the HMAC secret",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        resign=_hs256(_public_pem),
    ),
    _case(
        "sig-kid-not-string",
        "card",
        "a genuine ES256 signature whose kid is a number",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        resign=_kid_number,
    ),
    _case(
        "sig-100kb-protected-header",
        "card",
        "a genuine ES256 signature under a 100 KB protected header",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        resign=_huge_header,
    ),
    _case(
        "jwks-oct-key",
        "jwks",
        "HS256 signature; the card's own jku serves the HMAC secret as an oct key",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        trust_keys=False,
        allow_jku=True,
        resign=_hs256(lambda _b: OCT_SECRET, jku=True),
        serve_jwks=dumps(
            {"keys": [{"kty": "oct", "kid": f"{KEY_NAME}-card-1", "alg": "HS256", "k": _b64url(OCT_SECRET)}]}
        ),
    ),
    _case(
        "jwks-not-json",
        "jwks",
        "the card's own jku serves a body that is not JSON",
        "conformant",
        ("card_signature_unverifiable",),
        ("card_signature_invalid",),
        trust_keys=False,
        allow_jku=True,
        serve_jwks=b"keys? what keys",
    ),
    # --- committed proposals --------------------------------------------------------------------
    _case(
        "terms-digest-uppercase",
        "proposal",
        "the terms entry (and the answers) write the digest in uppercase hex",
        "nonconformant",
        ("terms_entry_invalid",),
        edit_digest=_uppercase_digest,
    ),
    _case(
        "terms-digest-sha512",
        "proposal",
        "the terms entry commits with a sha512: digest",
        "nonconformant",
        ("terms_entry_invalid",),
        edit_digest=_sha512_digest,
    ),
    _case(
        "nkey-bad-crc",
        "proposal",
        "the provider signature's nkey has a broken CRC-16 checksum",
        "nonconformant",
        ("proposal_signature_invalid",),
        edit_proposal=_bad_crc,
    ),
    _case(
        "nkey-wrong-prefix",
        "proposal",
        "the provider signature's nkey is a node key (N...), not a user key",
        "nonconformant",
        ("proposal_signature_invalid",),
        edit_proposal=_wrong_prefix,
    ),
    # --- the bytes of one answer ----------------------------------------------------------------
    _bad_answer(
        "answer-not-json",
        "interview/identity answers an HTML error page",
        _whole_body(lambda _b: b"<html>502 Bad Gateway</html>"),
    ),
    _bad_answer(
        "answer-truncated",
        "interview/identity's body stops half way",
        _whole_body(lambda b: b[: len(b) // 2]),
    ),
    _bad_answer(
        "answer-duplicate-keys",
        "interview/identity's response carries result twice",
        _whole_body(lambda b: _insert_member(b, b'"result":{"question":"identity"}')),
    ),
    *[
        _bad_answer(f"answer-{slug}", f"interview/identity: {what}", _value(raw))
        for slug, what, raw in _MALFORMED_VALUES
    ],
    _bad_answer(
        "answer-array", "interview/identity answers an array", _raw_result(b"[]"), "answer_shape_invalid"
    ),
    _bad_answer(
        "answer-string",
        "interview/identity answers a friendly string",
        _raw_result(b'"I am Stonework Books, happy to help!"'),
        "answer_shape_invalid",
    ),
    _bad_answer(
        "answer-null", "interview/identity answers null", _raw_result(b"null"), "answer_shape_invalid"
    ),
    # --- pointers -------------------------------------------------------------------------------
    _bad_answer(
        "pointer-slash",
        'a capabilities projection cites the member `/` (the key "")',
        _pointer("/"),
        "pointer_unresolved",
        "capabilities",
    ),
    _bad_answer(
        "pointer-tilde-2",
        "a capabilities projection cites `~2`, which is not a pointer",
        _pointer("~2"),
        "source_invalid",
        "capabilities",
    ),
    _bad_answer(
        "pointer-leading-zero",
        "a capabilities projection cites `/skills/01`",
        _pointer("/skills/01"),
        "pointer_unresolved",
        "capabilities",
    ),
    _bad_answer(
        "pointer-dash",
        "a capabilities projection cites `/skills/-` (past the end)",
        _pointer("/skills/-"),
        "pointer_unresolved",
        "capabilities",
    ),
    _bad_answer(
        "pointer-markup",
        "a capabilities projection cites a member written in markup",
        _pointer(f"/{TRAP}x[/]"),
        "pointer_unresolved",
        "capabilities",
        shows=TRAP,
    ),
    # --- values equal or different only under canonicalization ----------------------------------
    _case(
        "equal-key-order",
        "answer",
        "identity's /provider value lists its keys in reverse, pretty-printed",
        "conformant",
        (),
        ("projection_mismatch",),
        answer=("identity", _reordered_provider),
    ),
    _case(
        "equal-number-forms",
        "answer",
        "terms values write every integer as a double (2 as 2.0)",
        "conformant",
        (),
        ("projection_mismatch",),
        answer=("terms", _number_forms),
    ),
    _case(
        "equal-escaped-unicode",
        "answer",
        "identity answers with every non-ASCII character \\u-escaped",
        "conformant",
        (),
        ("projection_mismatch",),
        edit_card=_set_name(UNICODE_NAME),
        answer=("identity", _escaped),
        shows=UNICODE_NAME,
    ),
    _case(
        "differs-unicode-normalization",
        "answer",
        "the card's name is NFC, identity answers it in NFD",
        "nonconformant",
        ("projection_mismatch",),
        edit_card=_set_name(NFC_NAME),
        answer=("identity", _nfd_name),
        shows=NFC_NAME,
    ),
    _case(
        "big-int-equal",
        "answer",
        "the card holds 2^53+1; identity projects it exactly",
        "conformant",
        ("lossy_number",),
        ("projection_mismatch",),
        edit_card=_big_employees,
    ),
    _case(
        "big-int-differs",
        "answer",
        "the card holds 2^53+1; identity answers 2^53, equal only as doubles",
        "nonconformant",
        ("lossy_number", "projection_mismatch"),
        edit_card=_big_employees,
        answer=("identity", _one_less),
    ),
    # --- markup in what the screens draw --------------------------------------------------------
    _case(
        "markup-everywhere",
        "card",
        "name, description, provider and skills full of markup and ANSI escapes; answers consistent",
        "conformant",
        (),
        ("projection_mismatch",),
        edit_card=_markup_everywhere,
        shows=TRAP,
    ),
    _bad_answer(
        "answer-markup-error",
        "interview/identity answers a JSON-RPC error whose message is markup",
        _markup_error,
        "method_error",
        shows=TRAP,
    ),
    _case(
        "probe-leaky-markup",
        "probe",
        "the undefined method gets a chatty answer written in markup",
        "nonconformant",
        ("closure_method_not_refused",),
        probe=_leaky_markup,
    ),
    # --- the transport --------------------------------------------------------------------------
    _case(
        "card-silent",
        "transport",
        "accepts the card request and never answers",
        "unreachable",
        ("timeout", "card_unreachable"),
        slow=True,
        wire=Wire("card", "silent"),
    ),
    _case(
        "rpc-silent",
        "transport",
        "serves its card; accepts every interview call and never answers",
        "unreachable",
        ("timeout",),
        slow=True,
        wire=Wire("rpc", "silent"),
    ),
    _case(
        "card-trickle",
        "transport",
        "sends the card one byte a second",
        "unreachable",
        ("timeout", "card_unreachable"),
        slow=True,
        wire=Wire("card", "trickle"),
    ),
    _case(
        "card-endless-chunked",
        "transport",
        "streams a chunked card body that never ends",
        "unreachable",
        ("body_too_large", "card_malformed"),
        wire=Wire("card", "endless"),
    ),
    _case(
        "card-50mb",
        "transport",
        "announces and streams a 50 MB card",
        "unreachable",
        ("body_too_large", "card_malformed"),
        wire=Wire("card", "huge"),
    ),
    _case(
        "card-reset-mid-body",
        "transport",
        "resets the connection half way through the card",
        "unreachable",
        ("card_unreachable",),
        wire=Wire("card", "reset"),
    ),
    _case(
        "rpc-reset-mid-body",
        "transport",
        "resets every interview call half way through its body",
        "unreachable",
        ("transport_error",),
        wire=Wire("rpc", "reset"),
    ),
    _case(
        "card-garbage-status-line",
        "transport",
        "answers the card request with a status line that is not HTTP",
        "unreachable",
        ("card_unreachable",),
        wire=Wire("card", "garbage"),
    ),
    _case(
        "card-short-body",
        "transport",
        "promises 100 more card bytes than it sends, then closes",
        "unreachable",
        ("card_unreachable",),
        wire=Wire("card", "short"),
    ),
    _case(
        "rpc-http-500",
        "transport",
        "every interview call gets HTTP 500 with Retry-After: soon, probably (down, not dishonest)",
        "unreachable",
        ("http_status",),
        wire=Wire("rpc", "status", 500, (("Retry-After", "soon, probably"),)),
    ),
    _case(
        "card-http-503-retry-after-9999",
        "transport",
        "the card gets HTTP 503 with Retry-After in the year 9999",
        "unreachable",
        ("card_unreachable",),
        wire=Wire("card", "status", 503, (("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"),)),
    ),
    _case(
        "rpc-http-429-absurd-retry-after",
        "transport",
        "every interview call gets HTTP 429 with a 1000-digit Retry-After (down, not dishonest)",
        "unreachable",
        ("http_status",),
        ("rate_limited",),
        wire=Wire("rpc", "status", 429, (("Retry-After", "9" * 1000),)),
    ),
    _case(
        "rpc-http-429-negative-retry-after",
        "transport",
        "every interview call gets HTTP 429 with Retry-After: -1 (down, not dishonest)",
        "unreachable",
        ("http_status",),
        ("rate_limited",),
        wire=Wire("rpc", "status", 429, (("Retry-After", "-1"),)),
    ),
    _case(
        "rpc-http-429-briefly",
        "transport",
        "each distinct call is first refused with 429 and Retry-After: 1, then answered",
        "conformant",
        ("rate_limited",),
        slow=True,
        wire=Wire("rpc", "rate_once", 429, (("Retry-After", "1"),)),
    ),
    _case(
        "card-redirect-other-host",
        "transport",
        "the card redirects to the same port under another host name",
        "unreachable",
        ("redirect_refused", "card_unreachable"),
        wire=Wire("card", "redirect", 302, location="other-host"),
    ),
    _case(
        "card-redirect-loop",
        "transport",
        "the card redirects to itself, forever",
        "unreachable",
        ("redirect_refused", "card_unreachable"),
        wire=Wire("card", "redirect", 302, location="self"),
    ),
    _case(
        "card-redirect-private-public-only",
        "transport",
        "the card redirects to a private address; "
        "verified with --public-only, so nothing on loopback is contacted at all",
        "unreachable",
        ("address_blocked", "card_unreachable"),
        public_only=True,
        wire=Wire("card", "redirect", 302, location="private"),
    ),
    _case(
        "rpc-redirect-other-host",
        "transport",
        "every interview call redirects (307) to another host name",
        "unreachable",
        ("redirect_refused",),
        wire=Wire("rpc", "redirect", 307, location="other-host"),
    ),
]

HOSTILE_CASES: dict[str, HostileCase] = {case.name: case for case in _TABLE}
if len(HOSTILE_CASES) != len(_TABLE):  # pragma: no cover - a table typo, caught at import
    raise RuntimeError("duplicate hostile case names")


# --- building one case's site ----------------------------------------------------------------------


def _base_variant(case: HostileCase) -> Variant:
    """The honest agent a case starts from: a conformant v1.0 agent with terms, signed by us."""
    return Variant(case.name, case.description, "conformant", signed=False)


def build_site(case: HostileCase, base: str, key: documents.CardKey, provider: documents.Provider) -> Site:
    """Everything one case serves, with its one edit applied, signed with the suite's key."""
    urls = documents.Urls(base)
    variant = _base_variant(case)
    honest = documents.build(variant, urls, key, provider)
    card = copy.deepcopy(honest.card)
    committed = list(honest.committed or ())
    files = dict(honest.files)
    build = Build(urls, key)
    if case.edit_card is not None:
        case.edit_card(card, build)
    if case.edit_proposal is not None:
        committed[-1], path = _edited_proposal(card, committed[-1], case.edit_proposal, urls)
        files[path] = dumps(committed[-1].document)
    if case.edit_digest is not None:
        first = committed[0]
        new = case.edit_digest(first.digest, dict(first.document))
        _terms_entry(card)["params"]["proposals"][0]["digest"] = new
        committed[0] = replace(first, digest=new)
    if case.resign is not None:
        card["signatures"] = case.resign(card, build)
    else:
        card = signatures.sign_card(card, key.key, kid=key.kid, jku=urls.jwks)
    docs = replace(honest, card=card, card_bytes=dumps(card), committed=tuple(committed), files=files)
    agent = Agent(variant, [docs], RateLimiter(RateLimit(calls=1_000_000, per_seconds=60.0)))
    card_body = docs.card_bytes if case.serve_card is None else case.serve_card(docs.card_bytes)
    jwks_body = case.serve_jwks if case.serve_jwks is not None else dumps(key.jwks)
    return Site(case, urls, docs, agent, card_body, jwks_body)


def _edited_proposal(
    card: dict[str, Any], last: Committed, edit: ProposalEdit, urls: documents.Urls
) -> tuple[Committed, str]:
    """The last committed proposal with `edit` applied; the card now commits to the edited bytes."""
    doc = copy.deepcopy(dict(last.document))
    edit(doc)
    new_digest = digest(doc)
    for entry in _terms_entry(card)["params"]["proposals"]:
        if entry["url"] == last.url:
            entry["digest"] = new_digest
    return Committed(last.url, new_digest, last.offering, doc), last.url.removeprefix(urls.base)
