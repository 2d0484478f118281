"""The secrets a header value holds are its values, however the header writes them (issue 29 item 4).

`Cookie: sid=S; other=T` holds `S` and `T`, each a secret on its own; so does any header made of
`name=value` pairs (`X-Session: token=T`, `a=1&b=2`). What is checked for length at planning
(`credential_parts`) stays the value and the credential after its auth scheme, so a short
cookie like `lang=en` is sent, not refused.
"""

from __future__ import annotations

from explorer.core.scrub import Scrubber, credential_parts, secret_parts


def test_each_value_of_a_cookie_is_a_part_of_its_own() -> None:
    parts = secret_parts("sid=s3ss10n-value; other=0ther-value; lang=en")
    assert {"s3ss10n-value", "0ther-value", "en"} <= set(parts)
    assert "quoted value" in secret_parts('sid="quoted value"')
    assert {"v1", "v2"} <= set(secret_parts("k1=v1&k2=v2"))


def test_what_is_not_made_of_pairs_is_read_as_before() -> None:
    assert secret_parts("Bearer abc==") == ["Bearer abc==", "abc=="]  # base64 padding is no pair
    assert secret_parts("Basic dXNlcjpwYXNz") == ["Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "user:pass", "pass"]
    assert secret_parts("plain-token") == ["plain-token"]


def test_only_the_value_and_its_credential_are_checked_for_length() -> None:
    assert credential_parts("token=T") == ["token=T"]
    assert credential_parts("Bearer T0k3n") == ["Bearer T0k3n", "T0k3n"]


def test_a_cookie_value_echoed_alone_is_redacted() -> None:
    parts = secret_parts("sid=s3ss10n-value; other=0ther-value")
    scrubber = Scrubber(part for part in parts if len(part) >= 4)
    cleaned = scrubber.clean(b'{"echo": "s3ss10n-value", "and": "0ther%2Dvalue"}')
    assert b"s3ss10n" not in cleaned and b"0ther" not in cleaned
