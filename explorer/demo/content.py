"""What the reference agents say about themselves: skills, provider, standing-proposal clauses.

Plain data, kept apart from the code that assembles cards (`explorer.demo.documents`) so a reader
can see at a glance what a realistic declaration looks like, and so the hostile agent's content
(markup, escapes, bidi overrides, huge and deep values, big integers) is written down in one
place instead of being sprinkled through the server. Nothing here knows about HTTP or keys.

The two proposals are modelled on the signed Agent SoW vector in `tests/vectors/sow/`: a
standing proposal (client seat open, `starts_at` null) whose every clause carries a grade.
"""

from __future__ import annotations

from typing import Any

SOW_SPEC = "0.18.0-draft"
INTERVIEW_DESCRIPTION = "The five questions, answered from declared documents"
SIGNED_AT = "2026-08-11T09:00:00Z"
RESIGNED_AT = "2026-09-01T09:00:00Z"


def skills(generation: int = 0) -> list[dict[str, Any]]:
    """The two declared skills; generation 1 (the churning agent's second state) rewords one."""
    flag_description = (
        "Reviews reconciled transactions and flags duplicates, outliers and missing receipts."
        if generation == 0
        else "Reviews reconciled transactions and flags duplicates, outliers, missing receipts and "
        "late postings."
    )
    return [
        {
            "id": "reconcile-statement",
            "name": "Reconcile a statement",
            "description": "Matches each line of a bank or card statement against a ledger export "
            "and reports every difference.",
            "tags": ["accounting", "reconciliation"],
            "examples": ["Reconcile the July statement against our ledger export."],
            "inputModes": ["text/csv", "application/json"],
            "outputModes": ["application/json"],
        },
        {
            "id": "flag-exceptions",
            "name": "Flag exceptions",
            "description": flag_description,
            "tags": ["accounting", "audit"],
            "examples": ["Flag anything unusual in last week's reconciled card spend."],
            "inputModes": ["application/json"],
            "outputModes": ["application/json", "text/markdown"],
        },
    ]


def card_version(generation: int = 0) -> str:
    return "1.4.0" if generation == 0 else "1.5.0"


DEFAULT_INPUT_MODES = ["text/plain", "application/json"]
DEFAULT_OUTPUT_MODES = ["application/json"]

# Security schemes in each layout's own shape (docs/PROTOCOL.md section 1).
SECURITY_V1 = {
    "schemes": {"apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}}},
    "requirements": [{"schemes": {"apiKey": {"list": []}}}],
}
SECURITY_V03 = {
    "schemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}},
    "requirements": [{"apiKey": []}],
}


def guarded_security(kind: str, token_url: str) -> dict[str, Any]:
    """The v1.0 security declaration of a guarded agent that takes a bearer token or OAuth 2.0."""
    if kind == "bearer":
        return {
            "schemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "requirements": [{"schemes": {"bearer": {"list": []}}}],
        }
    flow = {"tokenUrl": token_url, "scopes": {"interview:read": "put the interview questions"}}
    return {
        "schemes": {"oauth2": {"oauth2SecurityScheme": {"flows": {"clientCredentials": flow}}}},
        "requirements": [{"schemes": {"oauth2": {"list": ["interview:read"]}}}],
    }


def _proposal(
    offering: str, sow_id: str, price: dict[str, Any], volume: dict[str, Any], examples: dict[str, Any]
) -> dict[str, Any]:
    return {
        "sow": "v1",
        "id": sow_id,
        "version": 1,
        "starts_at": None,
        "ends_at": "2027-02-01T00:00:00Z",
        "language": {
            "id": "agent-sow-standard-language",
            "version": 4,
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        },
        "parties": {
            "provider": {
                "agent": "",
                "handle": "books@stonework.demo",
                "owner": "Stonework Analytics (demo)",
            },
            "client": None,
            "grade": "evidence",
        },
        "scope": {"offerings": [offering], "examples": examples, "grade": "enforced"},
        "price": price,
        "volume": volume,
        "change_control": {
            "review_window_days": 7,
            "approval": {"formation": "agent", "amendment": "person"},
            "grade": "enforced",
        },
        "termination": {"convenience_notice_hours": 24, "grade": "enforced"},
        "disputes": {"posture": "refund_on_failed_task", "grade": "evidence"},
        "confidentiality": {
            "transport": {"sealed": True, "grade": "enforced"},
            "retention": {"max_days": 30, "grade": "enforced"},
            "promises": {"no_training": True, "grade": "recorded"},
        },
    }


def proposals() -> dict[str, dict[str, Any]]:
    """The two standing proposals, unsigned, keyed by offering (= skill id)."""
    return {
        "reconcile-statement": _proposal(
            "reconcile-statement",
            "sow_demo0reconcile01",
            {
                "arrangement": "fixed_fee",
                "currency": "XCR",
                "rates": [{"offering": "reconcile-statement", "per_task": 2500000}],
                "grade": "enforced",
            },
            {"per_hour": 2, "per_day": 8, "grade": "enforced"},
            {
                "in_scope": ["Reconcile the July statement against our ledger export."],
                "out_of_scope": ["Prepare our quarterly tax filing."],
            },
        ),
        "flag-exceptions": _proposal(
            "flag-exceptions",
            "sow_demo0exceptions1",
            {
                "arrangement": "fixed_fee",
                "currency": "XCR",
                "rates": [{"offering": "flag-exceptions", "per_task": 900000}],
                "grade": "enforced",
            },
            {"per_hour": 4, "per_day": 20, "grade": "enforced"},
            {
                "in_scope": ["Flag duplicate card charges in last week's spend."],
                "out_of_scope": ["Decide which charges to dispute."],
            },
        ),
    }


def uncommitted_proposal() -> dict[str, Any]:
    """A third proposal the fabricating agent serves and cites, but never commits to in its card."""
    return _proposal(
        "reconcile-statement",
        "sow_demo0fabricated1",
        {
            "arrangement": "fixed_fee",
            "currency": "XCR",
            "rates": [{"offering": "reconcile-statement", "per_task": 1500000}],
            "grade": "enforced",
        },
        {"per_hour": 10, "per_day": 80, "grade": "enforced"},
        {"in_scope": ["Anything ledger-shaped."], "out_of_scope": []},
    )


# --- the hostile agent -----------------------------------------------------------------------------

BIG_INT = 2**63 + 1  # beyond 2^53: JCS can only carry it as a rounded double
NESTING = 48  # deep, but inside the verifier's parse depth cap
HUGE_DESCRIPTION_BYTES = 1024 * 1024

MARKUP = "[@click=app.quit]click me[/] [bold red]shout[/bold red] [/] [link=https://evil.example]x[/link]"
ANSI = "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[2J"
CONTROL = "bell\x07 backspace\x08 null\x00 del\x7f c1\x9b"
BIDI = "invoice_\u202egnp.exe\u202c \u2066isolate\u2069"


def hostile_name() -> str:
    return f"[@click=app.quit]Hostile[/] [bold red]Agent[/] \x1b[5m{BIDI}\x1b[0m"


def hostile_skills() -> list[dict[str, Any]]:
    filler = "[b]1 MB[/b] \x1b[7mof\x1b[0m description \u202eevil\u202c. "
    huge = (filler * (HUGE_DESCRIPTION_BYTES // len(filler.encode("utf-8")) + 1))[:HUGE_DESCRIPTION_BYTES]
    return [
        {
            "id": "[bold]parse[/bold]",
            "name": MARKUP,
            "description": f"{ANSI} {CONTROL} {BIDI}",
            "tags": [MARKUP, ANSI],
            "examples": [CONTROL],
            "inputModes": ["text/plain"],
            "outputModes": ["text/plain"],
        },
        {
            "id": f"rtl-{BIDI}",
            "name": "huge",
            "description": huge,
            "tags": ["huge"],
            "inputModes": ["application/json"],
            "outputModes": ["application/json"],
        },
    ]


def deep_value(depth: int = NESTING) -> Any:
    value: Any = {"bottom": f"{MARKUP} {ANSI}"}
    for level in range(depth):
        value = [value] if level % 2 else {"level": value}
    return value


def hostile_proposals(skill_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Two proposals whose clauses carry hostile strings, a big integer and deep nesting."""
    out: dict[str, dict[str, Any]] = {}
    for index, skill_id in enumerate(skill_ids):
        doc = _proposal(
            skill_id,
            f"sow_demo0hostile{index:04d}",
            {
                "arrangement": "fixed_fee",
                "currency": "XCR",
                "rates": [{"offering": skill_id, "per_task": BIG_INT}],
                "grade": "enforced",
            },
            {"per_hour": 2, "per_day": 8, "grade": "enforced"},
            {"in_scope": [MARKUP, ANSI, CONTROL], "out_of_scope": [BIDI]},
        )
        doc["disputes"]["ladder"] = deep_value()
        doc["parties"]["provider"]["owner"] = f"{MARKUP} {BIDI}"
        out[skill_id] = doc
    return out


# --- the huge agent --------------------------------------------------------------------------------

HUGE_SKILLS = 5000

_ACTIONS = (
    ("reconcile", "Reconciles", "against"),
    ("summarize", "Summarizes", "for"),
    ("classify", "Classifies", "by"),
    ("extract", "Extracts the key fields from", "into"),
    ("review", "Reviews", "against"),
    ("forecast", "Forecasts", "from"),
    ("translate", "Translates", "into"),
    ("audit", "Audits", "against"),
    ("draft", "Drafts", "from"),
    ("route", "Routes", "by"),
)
_OBJECTS = (
    ("invoices", "supplier invoices", "the purchase-order ledger"),
    ("statements", "bank and card statements", "the general ledger export"),
    ("contracts", "signed service contracts", "the approved clause library"),
    ("tickets", "customer support tickets", "the product area taxonomy"),
    ("shipments", "outbound shipment manifests", "the carrier rate tables"),
    ("timesheets", "weekly timesheets", "the project budget lines"),
    ("receipts", "expense receipts", "the travel and expense policy"),
    ("payroll", "payroll runs", "the employee master file"),
    ("inventory", "stock counts", "the warehouse bin locations"),
    ("leases", "property leases", "the lease accounting schedule"),
    ("claims", "insurance claims", "the policy coverage terms"),
    ("orders", "sales orders", "the customer credit limits"),
)
_REGIONS = ("EMEA", "APAC", "North America", "LATAM", "Nordics", "DACH", "UK and Ireland", "Benelux")
_DETAILS = (
    "Flags every line it cannot match, with the reason and the closest candidate.",
    "Reports totals per period and lists anything outside the agreed tolerance.",
    "Keeps an audit trail of each decision and the source line it came from.",
    "Never changes the source documents; every result is a separate report.",
    "Handles multi-currency amounts and states the exchange rate it used.",
    "Returns a confidence per item and asks for a person's review below the threshold.",
)
_INPUT_MODES = (
    ["text/csv", "application/json"],
    ["application/pdf", "image/png", "image/jpeg"],
    ["application/json"],
    ["text/plain", "text/markdown"],
    ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "text/csv"],
)
_OUTPUT_MODES = (
    ["application/json"],
    ["application/json", "text/markdown"],
    ["text/csv"],
    ["application/pdf", "application/json"],
)


def huge_skills(count: int = HUGE_SKILLS) -> list[dict[str, Any]]:
    """`count` skills of a large back-office agent: the two ordinary skills, then generated ones.

    Deterministic (the same list every time), every id distinct, each skill with a description of
    a few sentences, tags, an example and its own input and output modes, so the card is the size
    and shape of a real catalogue (about 2.9 MB for 5,000 skills), not padding.
    """
    out = skills()
    for n in range(count - len(out)):
        verb, doing, link = _ACTIONS[n % len(_ACTIONS)]
        noun, things, reference = _OBJECTS[(n // len(_ACTIONS)) % len(_OBJECTS)]
        region = _REGIONS[(n // (len(_ACTIONS) * len(_OBJECTS))) % len(_REGIONS)]
        detail = _DETAILS[n % len(_DETAILS)]
        other = _DETAILS[(n + 3) % len(_DETAILS)]
        out.append(
            {
                "id": f"{verb}-{noun}-{n + 1:04d}",
                "name": f"{verb.title()} {things} ({region}, desk {n + 1})",
                "description": f"{doing} {things} for the {region} desk {link} {reference}. {detail} {other}",
                "tags": [noun, verb, region.lower().replace(" ", "-")],
                "examples": [f"{verb.title()} last month's {things} for {region} {link} {reference}."],
                "inputModes": list(_INPUT_MODES[n % len(_INPUT_MODES)]),
                "outputModes": list(_OUTPUT_MODES[(n // 3) % len(_OUTPUT_MODES)]),
            }
        )
    return out
