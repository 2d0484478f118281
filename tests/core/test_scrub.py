"""`explorer.core.scrub`: a secret is found however JSON and URLs re-encode it, and only it is replaced.

The forms come from `tests/support/secret_echo.py` (the echoing agent writes the same ones), so this is
the scrubber's side of the end-to-end test in tests/commands/test_secrets_never_written.py, over many
secrets and surroundings at once; and what replacing a secret does to a signed card.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer.core.scrub import Scrubber, is_secret_header, secret_parts, too_short
from explorer.core.signatures import generate_key, public_jwks, sign_card
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from tests.support.cards import agent_card
from tests.support.secret_echo import encodings

# Characters a token, key or header value may hold (visible ASCII), and beyond (a client secret
# read from a file may be any text without line breaks).
_ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
_ANY = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\n\0")
_SECRET = st.text(st.one_of(_ASCII, _ANY), min_size=4, max_size=40)
_FORMS = [name for name in encodings("x") if name != "html"]


# What an echo sits between: any text without escape characters of its own. An agent that writes
# `%` or `\\` right against an ENCODED secret, so that the two decode together, hides it as surely
# as one that hashes it (SECURITY.md says so); a character in front of a secret written as is
# does not hide it (the test below).
_AROUND = st.text(st.characters(blacklist_characters="%\\+"), max_size=20)


@settings(max_examples=300, deadline=None)
@given(secret=_SECRET, form=st.sampled_from(_FORMS), before=_AROUND, after=_AROUND)
def test_every_encoding_of_a_secret_is_replaced(secret: str, form: str, before: str, after: str) -> None:
    assume(not too_short(secret))  # refused as a credential (a trailing `\\` is no character)
    assume(not (set(before) | set(after)) & set(secret))
    encoded = encodings(secret)[form]
    data = f'{{"a":"{json.dumps(before)[1:-1]}{encoded}{json.dumps(after)[1:-1]}"}}'.encode()
    cleaned = Scrubber([secret]).clean(data)
    assert b"<redacted>" in cleaned
    assert encoded.encode() not in cleaned
    assert secret.encode() not in cleaned


def test_the_rest_of_the_bytes_is_left_as_it_was() -> None:
    secret = 'p4ss/"w\\rd'
    data = b'{"ok":"caf\\u00e9 100% + \\"quoted\\"","echo":"' + encodings(secret)["u_upper"].encode() + b'"}'
    assert Scrubber([secret]).clean(data) == b'{"ok":"caf\\u00e9 100% + \\"quoted\\"","echo":"<redacted>"}'
    assert Scrubber([secret]).clean(b"no secret here: p4ss/w") == b"no secret here: p4ss/w"
    assert Scrubber().clean(data) == data


def test_a_character_put_in_front_does_not_hide_a_secret() -> None:
    """`\\` before a secret starting with `n` decodes as a line break, `%` before one starting
    with two hex digits as a byte: the secret is still there as written, and is found."""
    for secret, data in (("nabc-123", b'"\\nabc-123"'), ("4142zz", b"%4142zz"), ("u0041x", b"\\u0041x")):
        assert Scrubber([secret]).clean(data).count(b"<redacted>") == 1, (secret, data)


def test_a_secret_in_a_header_value_a_url_and_text() -> None:
    scrubber = Scrubber(["t0ken-value"])
    assert (
        scrubber.clean_text("http://x.example/?t=t0ken%2Dvalue&u=1") == "http://x.example/?t=<redacted>&u=1"
    )
    assert scrubber.clean_text("Bearer t0ken-value") == "Bearer <redacted>"
    assert scrubber.clean_text("t0ken-val") == "t0ken-val"


def test_a_value_too_short_to_find_in_text_is_replaced_only_where_it_stands_alone() -> None:
    scrubber = Scrubber(["q7"])
    json_body = b'{"access_token":"q7","q":"aq7b q7"}'
    assert scrubber.clean(json_body) == b'{"access_token":"<redacted>","q":"aq7b q7"}'
    form = b"access_token=q7&token_type=bearer"
    assert scrubber.clean(form) == b"access_token=<redacted>&token_type=bearer"
    assert scrubber.clean(b"q7") == b"<redacted>"
    assert too_short("q7") and too_short("%41%42") and not too_short("abcd")


def test_the_secrets_a_header_value_holds() -> None:
    basic = base64.b64encode(b"client:s3cret-pw").decode()
    assert secret_parts(f"Basic {basic}") == [f"Basic {basic}", basic, "client:s3cret-pw", "s3cret-pw"]
    assert secret_parts("Bearer abc.def") == ["Bearer abc.def", "abc.def"]
    assert secret_parts("plain-key") == ["plain-key"]
    assert is_secret_header("Authorization") and is_secret_header("X-Api-Key")
    assert not is_secret_header("X-Debug")


def test_a_body_too_dense_with_escapes_to_search_is_not_kept() -> None:
    """A hostile agent's megabytes of escapes would cost more to search than the run: with secrets
    in play, such a body is replaced whole (it could hide one); without, it is kept."""
    dense = b'"' + b'\\"' * 300_000 + b'"'
    assert Scrubber(["s3cret-value"]).clean(dense).startswith(b"<redacted: a body too dense")
    assert Scrubber().clean(dense) == dense


async def test_a_secret_in_a_signed_card_is_replaced_and_the_report_says_why(tmp_path: Path) -> None:
    """The record never keeps a secret to keep a signature checkable: a header value that also
    occurs in the card (here a tenant name) is replaced there too, and the signature finding says
    the recorded card holds `<redacted>` where the signed bytes did not."""
    key = generate_key("ES256", kid="k1")
    card = agent_card("Tenant acme-tenant-7", interview=False)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(sign_card(card, key, kid="k1")), encoding="utf-8")
    options = Options(keys=(public_jwks(key),), headers=(("X-Tenant", "acme-tenant-7"),), timeout=1.0)
    run = await run_interview(str(path), options)
    recorded = next(e for e in run.exchanges if e.purpose == "card")
    assert b"acme-tenant-7" not in recorded.response_body and b"<redacted>" in recorded.response_body
    found = next(f for f in run.report["findings"] if f["code"] == "card_signature_invalid")
    assert "holds <redacted> where a secret of this run was replaced" in found["detail"]
    clean = await run_interview(str(path), Options(keys=(public_jwks(key),), timeout=1.0))
    assert clean.report["card"]["signature"]["status"] == "verified"
