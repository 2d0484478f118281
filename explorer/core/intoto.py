"""The signed statement of a run: an in-toto Statement v1 carrying a SLSA Verification Summary.

A runner that signs an interview signs this statement (inside a DSSE envelope, see
`explorer.core.attestation`). It names what was looked at and what was concluded, in a form
any in-toto tool reads without knowing this explorer:

- `subject`: the card (its URL, the SHA-256 of the bytes served), every committed proposal that
  was fetched (URL, SHA-256 of the bytes served) and the transcript itself (`name`
  `transcript`, SHA-256 of the RFC 8785 bytes of the JSON transcript without its
  `run_attestation` member, so the envelope can travel inside the file it covers);
- `predicate` (SLSA VSA v1): `verifier.id` the runner, `timeVerified`, `resourceUri` the card,
  `policy.uri` the interview extension, `verificationResult` PASSED only for `conformant`,
  and, under field names that are URIs (the parsing rules' extension mechanism), the verdict,
  the role, the runner's name as given and the codes of the error findings.

`statement_problems` states the Statement v1 and VSA v1 field rules as code, so the tests and
the offline check hold every statement, ours or a received one, to the published rules rather
than to a re-description of them. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from explorer.core.canonical import canonicalize, sha256_hex
from explorer.core.card import INTERVIEW_URI
from explorer.core.jsonshape import member
from explorer.core.run import Exchange
from explorer.core.view import ReportView

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VSA_TYPE = "https://slsa.dev/verification_summary/v1"
TRANSCRIPT_SUBJECT = "transcript"
ATTESTATION_MEMBER = "run_attestation"  # the transcript member that carries the envelope
# Extension fields of the predicate: field names that are URIs (VSA v1 parsing rules).
VERDICT_FIELD = f"{INTERVIEW_URI}#verdict"
ROLE_FIELD = f"{INTERVIEW_URI}#role"
RUNNER_FIELD = f"{INTERVIEW_URI}#runner"
ERROR_CODES_FIELD = f"{INTERVIEW_URI}#errorCodes"
# The one custom SlsaResult this verifier reports (custom values must not start with SLSA_).
CONFORMANT_LEVEL = "A2A_INTERVIEW_CONFORMANT"
RUNNER_URN = "urn:interview-explorer:runner:"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEX = re.compile(r"^[0-9a-f]+$")
_RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128, "sha1": 40}
_VSA_FIELDS = frozenset(
    {
        "verifier",
        "timeVerified",
        "resourceUri",
        "policy",
        "inputAttestations",
        "verificationResult",
        "verifiedLevels",
        "dependencyLevels",
        "slsaVersion",
    }
)


class StatementError(ValueError):
    """A transcript that cannot be stated (for instance a value JCS cannot encode)."""


def transcript_sha256(transcript: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the RFC 8785 bytes of a JSON transcript without its `run_attestation`.

    The bytes are those of `canonicalize(transcript)`, produced a few levels at a time: RFC 8785
    writes an object as its members sorted by UTF-16 code units, each `key:value` in canonical
    form, so canonicalizing the members one by one and joining them gives the same bytes, and a
    float in one exchange (its `elapsed_ms`) keeps only that small part off the fast path instead
    of the whole multi-megabyte report. Raises StatementError when a value has no canonical form."""
    from explorer.core.canonical import CanonicalError

    body = {key: value for key, value in transcript.items() if key != ATTESTATION_MEMBER}
    digest = hashlib.sha256()
    try:
        _canonical_into(digest, body, SPLIT_DEPTH)
    except CanonicalError as exc:
        raise StatementError(f"the transcript has no RFC 8785 form: {exc}") from None
    return digest.hexdigest()


SPLIT_DEPTH = 4  # transcript > report | exchanges > member | exchange > member


def _canonical_into(digest: Any, value: Any, depth: int) -> None:
    from explorer.core.canonical import CanonicalError

    if depth > 0 and isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise CanonicalError("an object key is not a string")
        digest.update(b"{")
        for index, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))):
            if index:
                digest.update(b",")
            digest.update(canonicalize(key))
            digest.update(b":")
            _canonical_into(digest, value[key], depth - 1)
        digest.update(b"}")
    elif depth > 0 and isinstance(value, list | tuple) and _holds_containers(value):
        # A list of objects (the exchanges) is taken item by item; a list of scalars in one go,
        # which the fast path writes in C however long it is.
        digest.update(b"[")
        for index, item in enumerate(value):
            if index:
                digest.update(b",")
            _canonical_into(digest, item, depth - 1)
        digest.update(b"]")
    else:
        digest.update(canonicalize(value))


def _holds_containers(items: list[Any] | tuple[Any, ...]) -> bool:
    return any(issubclass(kind, Mapping | list | tuple) for kind in set(map(type, items)))


def is_uri(text: Any) -> bool:
    """An absolute URI (RFC 3986: a scheme, then anything) whose scheme is lowercase."""
    if not isinstance(text, str) or not _SCHEME.match(text) or any(c.isspace() for c in text):
        return False
    return text.split(":", 1)[0] == text.split(":", 1)[0].lower()


def runner_uri(name: str) -> str:
    """`verifier.id` for a runner: the name itself when it is already a URI, else a URN that
    carries it percent-encoded (a TypeURI must be a URI; `ci@example.org` is not one)."""
    if is_uri(name):
        return name
    return RUNNER_URN + quote(name, safe="@.-_~")


def resource_uri(card_url: str) -> str:
    """`resourceUri` for a card: its URL, or a `file:` URI for a card read from a file."""
    if is_uri(card_url) and not re.match(r"^[A-Za-z]:[\\/]", card_url):
        return card_url
    path = PurePath(card_url)
    return path.as_uri() if path.is_absolute() else "file:" + quote(card_url.replace("\\", "/"))


def _served(ex: Exchange) -> bool:
    return ex.usable  # the one rule for a usable response (Exchange.problem)


def subjects(exchanges: Sequence[Exchange], transcript_digest: str) -> list[dict[str, Any]]:
    """The card and every committed proposal of the last attempt, as served, then the transcript."""
    last = max((ex.attempt for ex in exchanges), default=1)
    out: list[dict[str, Any]] = []
    names: set[str] = set()
    for purpose in ("card", "proposal"):
        for ex in exchanges:
            if ex.attempt == last and ex.purpose == purpose and _served(ex) and ex.url not in names:
                names.add(ex.url)
                out.append({"name": ex.url, "digest": {"sha256": sha256_hex(ex.response_body)}})
    out.append({"name": TRANSCRIPT_SUBJECT, "digest": {"sha256": transcript_digest}})
    return out


def error_codes(report: Mapping[str, Any]) -> list[str]:
    findings = report.get("findings")
    items = findings if isinstance(findings, list) else []
    return sorted(
        {str(f.get("code")) for f in items if isinstance(f, Mapping) and f.get("severity") == "error"}
    )


def build_statement(
    report: Mapping[str, Any],
    exchanges: Sequence[Exchange],
    transcript_digest: str,
    *,
    runner: str,
    role: str,
    time_verified: str,
    explorer_version: str,
) -> dict[str, Any]:
    """The in-toto Statement v1 (SLSA VSA v1 predicate) a runner signs for one run."""
    card_url = ReportView.of(report).card.url
    verdict = str(report.get("verdict"))
    passed = verdict == "conformant"
    predicate: dict[str, Any] = {
        "verifier": {"id": runner_uri(runner), "version": {"interview-explorer": explorer_version}},
        "timeVerified": time_verified,
        "resourceUri": resource_uri(card_url or str(report.get("target") or "")),
        "policy": {"uri": INTERVIEW_URI},
        "verificationResult": "PASSED" if passed else "FAILED",
        "verifiedLevels": [CONFORMANT_LEVEL] if passed else ["FAILED"],
        "slsaVersion": "1.0",
        VERDICT_FIELD: verdict,
        ROLE_FIELD: role,
        RUNNER_FIELD: runner,
        ERROR_CODES_FIELD: error_codes(report),
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects(exchanges, transcript_digest),
        "predicateType": VSA_TYPE,
        "predicate": predicate,
    }


def transcript_subject_digest(statement: Mapping[str, Any]) -> str | None:
    """The SHA-256 the statement gives for the `transcript` subject, or None."""
    for subject in statement.get("subject") or []:
        if isinstance(subject, Mapping) and subject.get("name") == TRANSCRIPT_SUBJECT:
            value = member(subject, "digest", "sha256")
            return value if isinstance(value, str) else None
    return None


def predicate_text(statement: Mapping[str, Any], field: str) -> str | None:
    value = member(statement, "predicate", field)
    return value if isinstance(value, str) else None


# --- the published field rules ------------------------------------------------------------------


def _digest_problems(digest: Any, where: str) -> list[str]:
    if not isinstance(digest, Mapping) or not digest:
        return [f"{where}.digest must be a non-empty DigestSet"]
    problems = []
    for alg, value in digest.items():
        if not isinstance(value, str) or not _HEX.match(value):
            problems.append(f"{where}.digest.{alg} must be lowercase hex")
        elif alg in _DIGEST_LENGTHS and len(value) != _DIGEST_LENGTHS[alg]:
            problems.append(f"{where}.digest.{alg} has the wrong length")
    return problems


def statement_problems(statement: Any) -> list[str]:
    """What breaks the in-toto Statement v1 and SLSA VSA v1 field rules; [] when none does."""
    if not isinstance(statement, Mapping):
        return ["the statement is not a JSON object"]
    problems = []
    if statement.get("_type") != STATEMENT_TYPE:
        problems.append(f"_type must be {STATEMENT_TYPE}")
    subject = statement.get("subject")
    if not isinstance(subject, list) or not subject:
        problems.append("subject must be a non-empty array")
        subject = []
    names: set[str] = set()
    for i, item in enumerate(subject):
        where = f"subject[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{where} must be a ResourceDescriptor object")
            continue
        problems += _digest_problems(item.get("digest"), where)
        name = item.get("name")
        if name is not None:
            if not isinstance(name, str):
                problems.append(f"{where}.name must be a string")
            elif name in names:
                problems.append(f"{where}.name {name!r} is not unique")
            else:
                names.add(name)
    if statement.get("predicateType") != VSA_TYPE:
        problems.append(f"predicateType must be {VSA_TYPE}")
    predicate = statement.get("predicate")
    if not isinstance(predicate, Mapping):
        return problems + ["predicate must be an object"]
    return problems + vsa_problems(predicate)


def vsa_problems(predicate: Mapping[str, Any]) -> list[str]:
    """The SLSA Verification Summary v1 rules for a predicate."""
    problems = []
    verifier = predicate.get("verifier")
    if not isinstance(verifier, Mapping) or not is_uri(verifier.get("id")):
        problems.append("predicate.verifier.id must be a URI")
    time_verified = predicate.get("timeVerified")
    if not isinstance(time_verified, str) or not _RFC3339_UTC.match(time_verified):
        problems.append("predicate.timeVerified must be an RFC 3339 timestamp in UTC (Z)")
    if not is_uri(predicate.get("resourceUri")):
        problems.append("predicate.resourceUri must be a URI")
    policy = predicate.get("policy")
    if not isinstance(policy, Mapping) or not is_uri(policy.get("uri")):
        problems.append("predicate.policy must be a ResourceDescriptor with a uri")
    if predicate.get("verificationResult") not in ("PASSED", "FAILED"):
        problems.append("predicate.verificationResult must be PASSED or FAILED")
    levels = predicate.get("verifiedLevels")
    if not isinstance(levels, list) or not all(isinstance(level, str) for level in levels):
        problems.append("predicate.verifiedLevels must be an array of SlsaResult strings")
    else:
        allowed = {f"SLSA_BUILD_LEVEL_{n}" for n in range(4)}
        problems += [
            f"predicate.verifiedLevels: custom value {level!r} must not start with SLSA_"
            for level in levels
            if level.startswith("SLSA_") and level not in allowed
        ]
    version = predicate.get("slsaVersion")
    if version is not None and not (isinstance(version, str) and re.match(r"^\d+\.\d+$", version)):
        problems.append("predicate.slsaVersion must be <MAJOR>.<MINOR>")
    problems += [
        f"predicate.{key}: an extension field's name must be a URI"
        for key in predicate
        if key not in _VSA_FIELDS and not is_uri(key)
    ]
    return problems
