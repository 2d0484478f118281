"""The untracked payload builders give the tracked path's bytes, byte for byte, on every card.

`signatures.verify_card` builds each form's payload bytes without the per-value tracking trees
(`forms.payload_bytes_fast`, `payload_bytes_cached`, `payload_value`), which are several times
cheaper on a large card; the tracked trees (`forms.payload_bytes`) stay the reference, held to the
real SDKs by tests/core/test_sdk_interop.py and test_js_interop.py. This file holds the two paths
equal: same bytes, or both refusing the card (FormError), on the SDK interop fuzz cards, the JS
interop generator and hand-written edge cards, generic hostile JSON, and every reference agent's
card, signed as it is served.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.card_forms import a2a_js, python_sdk
from explorer.core.card_forms.forms import FORMS, payload_bytes, payload_bytes_cached, payload_bytes_fast
from explorer.core.card_forms.tracked import FormError, plain
from tests.support.strategies import json_scalars, json_values

EXAMPLES = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def _outcome(build: Any, card: Any, form: str) -> bytes | str:
    try:
        return bytes(build(card, form))
    except FormError:
        return "refused"


def _assert_same(card: Any) -> None:
    before = json.dumps(card, sort_keys=True)
    values: dict[Any, Any] = {}
    for form in FORMS:
        tracked = _outcome(payload_bytes, card, form)
        assert _outcome(payload_bytes_fast, card, form) == tracked, form
        assert _outcome(lambda c, f: payload_bytes_cached(c, f, values), card, form) == tracked, form
    for module in (python_sdk, a2a_js):  # the builders themselves, without the tracked fallback
        assert _value_outcome(module.payload_value, card) == _value_outcome(
            lambda c, m=module: plain(m.payload_tree(c)), card
        ), module.__name__
    assert json.dumps(card, sort_keys=True) == before, "a fast path changed the served card"


def _value_outcome(build: Any, card: Any) -> str:
    """The value as JSON text (so 1 and 1.0, True and 1 differ), or that the card was refused."""
    try:
        return json.dumps(build(card), sort_keys=True)
    except (FormError, RecursionError):
        return "refused"


def _sdk_cards() -> Any:
    pytest.importorskip("a2a")
    from tests.core.test_sdk_interop import cards

    return cards


@EXAMPLES
@given(st.data())
def test_the_sdk_interop_cards_give_the_same_bytes(data: st.DataObject) -> None:
    _assert_same(json.loads(json.dumps(data.draw(_sdk_cards()))))


_KEYS = st.sampled_from(
    [
        "name",
        "url",
        "skills",
        "security",
        "securitySchemes",
        "type",
        "in",
        "capabilities",
        "params",
        "supportedInterfaces",
        "additionalInterfaces",
        "supportsAuthenticatedExtendedCard",
        "extensions",
        "list",
        "schemes",
        "__proto__",
        "tags",
        "supported_interfaces",
        "apiKeySecurityScheme",
        "[x.y]",
        "",
    ]
)
_HOSTILE = json_values(
    json_scalars(text=st.sampled_from(["", "apiKey", "http", "JSONRPC", "yes", "0", "é"]), floats=None),
    keys=_KEYS,
    max_leaves=30,
)


@EXAMPLES
@given(st.dictionaries(_KEYS, _HOSTILE, max_size=8))
def test_hostile_json_gives_the_same_bytes(card: dict[str, Any]) -> None:
    _assert_same(card)


def test_the_js_interop_cards_give_the_same_bytes() -> None:
    from tests.core.test_js_interop import _EDGE_CARDS, _card

    rng = random.Random(20260)
    for card in [*_EDGE_CARDS, *(_card(rng) for _ in range(400))]:
        _assert_same(copy.deepcopy(card))


def test_a_card_the_untracked_path_refuses_is_refused_with_the_tracked_message() -> None:
    card = {"name": "n", "skills": [{"id": "a", "name": 5}]}
    with pytest.raises(FormError) as tracked:
        payload_bytes(card, "sdk-normalized")
    with pytest.raises(FormError) as fast:
        payload_bytes_fast(card, "sdk-normalized")
    assert str(fast.value) == str(tracked.value)
    assert "/skills/0/name" in str(fast.value)


def _reference_cards() -> list[tuple[str, dict[str, Any]]]:
    from explorer.demo import documents
    from explorer.demo.variants import VARIANTS

    provider = documents.Provider()
    out = []
    for name, variant in VARIANTS.items():
        urls = documents.Urls(f"http://127.0.0.1:9/{name}")
        built = documents.build(variant, urls, documents.CardKey.generate(name), provider)
        out.append((name, json.loads(built.card_bytes)))
    return out


def test_every_reference_agent_card_gives_the_same_bytes() -> None:
    cards = _reference_cards()
    assert any(name == "huge" for name, _ in cards)
    for name, card in cards:
        for form in FORMS:
            tracked = _outcome(payload_bytes, card, form)
            assert _outcome(payload_bytes_fast, card, form) == tracked, (name, form)
