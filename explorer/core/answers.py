"""Shape checks for what an agent sends back: the JSON-RPC envelope, interview answers, refusals.

These are the interview extension's sections 5 and 6 read as a grammar. Every function takes
untrusted, already-parsed (or raw) data and returns findings; none of them raises on bad input,
because a malformed answer is a result to report, not a crash. Shape is checked here and only here; the
section 7 comparison of values against declared documents lives in `explorer.core.diff`.

Members named in findings are RFC 6901 pointers into the answer (or refusal) itself, so a user
can find the offending member in the raw response: `/projections/2/source/url`, `/verbose`.

Reading of the interview extension where it is silent:

- `declared` is shown only in the extension's `terms` example and is the whole answer of section
  4 rule 4 (no terms: `declared: false`), so it is required on `terms` and optional (but, when
  present, a boolean) on the other four questions.
- A projection's source may carry `url`/`digest` even when `document` is `card`; the extension only
  says a card source needs no locator, so extra locators are tolerated there, not required.
- A proposal source's `digest` must look like a terms-extension digest (`sha256:` + 64 lowercase
  hex), because it is matched byte for byte against the card's commitments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core import pointer as jp
from explorer.core.findings import Finding, finding
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.text import safe_text

RpcKind = Literal["result", "error", "malformed"]

REFUSAL_REASONS: tuple[str, ...] = ("out_of_scope", "not_declared")
REFUSAL_MEMBERS: frozenset[str] = frozenset({"refused", "reason", "detail", "declared_skills"})
ANSWER_MEMBERS: frozenset[str] = frozenset({"question", "declared", "projections"})
PROJECTION_MEMBERS: frozenset[str] = frozenset({"source", "value"})
SOURCE_MEMBERS: frozenset[str] = frozenset({"document", "member", "url", "digest"})
DOCUMENTS: tuple[str, ...] = ("card", "proposal")

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class _AnyId:
    """The type of `ANY_ID`: accept whatever id the response carries (the request id is unknown)."""

    def __repr__(self) -> str:
        return "ANY_ID"


ANY_ID: Any = _AnyId()


@dataclass(frozen=True)
class RpcOutcome:
    """One JSON-RPC response body, read strictly.

    `kind` is "result" (then `result` holds it), "error" (then `code`, `message`, `data` and the
    raw `error` object), or "malformed" (then `problem` says what was wrong). `body` is the parsed
    body whenever it parsed at all, so a report can show it even when the envelope is wrong.
    """

    kind: RpcKind
    result: Any = None
    error: Any = None
    code: int | None = None
    message: str | None = None
    data: Any = None
    has_data: bool = False
    problem: str | None = None
    body: Any = None

    @property
    def payload(self) -> Any:
        """What the agent answered: the result, the error object, or None when malformed."""
        if self.kind == "result":
            return self.result
        if self.kind == "error":
            return self.error
        return None


def _brief(value: Any, limit: int = 80) -> str:
    """An agent-supplied value quoted in a detail: repr, printable, and short."""
    return safe_text(repr(value), limit=limit)


def _kind_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _same_id(got: Any, expected: Any) -> bool:
    """JSON-RPC ids compare by JSON type and value; `true` is not `1` and `1.0` is not `"1"`."""
    if isinstance(got, bool) or isinstance(expected, bool):
        return isinstance(got, bool) and isinstance(expected, bool) and got == expected
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)):
        return got == expected
    return type(got) is type(expected) and got == expected


def read_jsonrpc(body: bytes, *, expected_id: Any) -> RpcOutcome:
    """Parse a JSON-RPC 2.0 response body strictly and classify it.

    Checks: strict JSON, an object, `jsonrpc == "2.0"`, `id` equal to `expected_id` (an error
    may carry `id: null`, which JSON-RPC allows when the server could not read the request id),
    exactly one of `result`/`error` (`expected_id=ANY_ID` skips the id check when the request's
    id is not known), and an error object with an integer `code`, a string
    `message` and optional `data`. Other envelope members are tolerated: JSON-RPC says nothing
    about them and they are not part of the answer.
    """
    try:
        doc = strict_parse(body)
    except StrictJsonError as exc:
        return RpcOutcome("malformed", problem=f"the response body is not valid JSON: {exc}")
    except (ValueError, TypeError, RecursionError) as exc:  # defensive: never a traceback
        return RpcOutcome("malformed", problem=f"the response body is not valid JSON: {exc}")
    if not isinstance(doc, dict):
        return RpcOutcome(
            "malformed", problem=f"the response is {_kind_name(doc)}, not a JSON-RPC object", body=doc
        )
    if doc.get("jsonrpc") != "2.0":
        return RpcOutcome("malformed", problem='the response lacks "jsonrpc": "2.0"', body=doc)
    has_result, has_error = "result" in doc, "error" in doc
    if has_result == has_error:
        which = "both" if has_result else "neither"
        return RpcOutcome("malformed", problem=f"the response carries {which} of result and error", body=doc)
    if "id" not in doc:
        return RpcOutcome("malformed", problem="the response has no id", body=doc)
    rid = doc["id"]
    if expected_id is not ANY_ID and not _same_id(rid, expected_id) and not (has_error and rid is None):
        return RpcOutcome(
            "malformed",
            problem=f"the response id {_brief(rid)} does not match the request id {_brief(expected_id)}",
            body=doc,
        )
    if has_result:
        return RpcOutcome("result", result=doc["result"], body=doc)
    err = doc["error"]
    if not isinstance(err, dict):
        return RpcOutcome("malformed", problem=f"the error is {_kind_name(err)}, not an object", body=doc)
    code, message = err.get("code"), err.get("message")
    if isinstance(code, bool) or not isinstance(code, int):
        return RpcOutcome("malformed", problem="the error has no integer code", body=doc)
    if not isinstance(message, str):
        return RpcOutcome("malformed", problem="the error has no string message", body=doc)
    return RpcOutcome(
        "error", error=err, code=code, message=message, data=err.get("data"), has_data="data" in err, body=doc
    )


def check_answer(question: str, result: Any) -> list[Finding]:
    """Findings about the shape of one interview answer (the interview extension, section 5); [] if fine.

    The answer must be an object with exactly `question` (equal to the question asked),
    `declared` (a boolean; required on `terms` only, see the module docstring) and
    `projections` (an array). Each projection is exactly `{source, value}`; each source is
    `{document, member, url?, digest?}` with `document` "card" or "proposal", `member` a valid
    RFC 6901 pointer, and `url` plus a well-formed `digest` on a proposal source. Any other
    member, at any level, is `answer_extra_member` (section 5 rule 3: no free-text field anywhere).
    """
    out: list[Finding] = []

    def add(code: str, detail: str, member: str | None = None) -> None:
        out.append(finding(code, detail, question=question, member=member))

    if not isinstance(result, dict):
        add(
            "answer_shape_invalid",
            f"the answer is {_kind_name(result)}, not an object {{question, declared, projections}}",
        )
        return out
    for key in sorted(set(result) - ANSWER_MEMBERS):
        add(
            "answer_extra_member",
            f"the answer carries {_brief(key)}, which is not question, declared or "
            "projections (interview extension 5.3: no member that is not a projection)",
            jp.join(key),
        )
    if "question" not in result:
        add("answer_shape_invalid", "the answer does not name its question", "/question")
    elif result["question"] != question:
        add(
            "answer_shape_invalid",
            f"the answer names the question {_brief(result['question'])}, but {question!r} was asked",
            "/question",
        )
    if "declared" in result:
        if not isinstance(result["declared"], bool):
            add(
                "answer_shape_invalid",
                f"declared is {_kind_name(result['declared'])}, not a boolean",
                "/declared",
            )
    elif question == "terms":
        add(
            "answer_shape_invalid",
            "the terms answer lacks declared (interview extension 4.4: declared "
            "states whether terms are published)",
            "/declared",
        )
    projections = result.get("projections")
    if "projections" not in result:
        add("answer_shape_invalid", "the answer has no projections array", "/projections")
    elif not isinstance(projections, list):
        add("answer_shape_invalid", f"projections is {_kind_name(projections)}, not an array", "/projections")
    else:
        for index, proj in enumerate(projections):
            out.extend(check_projection(question, index, proj))
    return out


_CARD_SOURCE: frozenset[str] = frozenset({"document", "member"})


def _plain_card_projection(proj: Any) -> bool:
    """The common well-formed case, recognised without building anything: exactly
    `{source: {document: "card", member}, value}` with a pointer that has nothing escaped."""
    if type(proj) is not dict or proj.keys() != PROJECTION_MEMBERS:
        return False
    source = proj["source"]
    if type(source) is not dict or source.keys() != _CARD_SOURCE or source["document"] != "card":
        return False
    member = source["member"]
    return type(member) is str and (member == "" or (member.startswith("/") and "~" not in member))


def check_projection(question: str, index: int, proj: Any) -> list[Finding]:
    """Findings about one projection `{source, value}` at `/projections/<index>`."""
    if _plain_card_projection(proj):
        return []
    out: list[Finding] = []
    base = jp.join("projections", index)

    def add(code: str, detail: str, member: str) -> None:
        out.append(finding(code, detail, question=question, member=member))

    if not isinstance(proj, dict):
        add("answer_shape_invalid", f"projection {index} is {_kind_name(proj)}, not {{source, value}}", base)
        return out
    for key in sorted(set(proj) - PROJECTION_MEMBERS):
        add(
            "answer_extra_member",
            f"projection {index} carries {_brief(key)}, which is not source or value",
            base + jp.join(key),
        )
    if "value" not in proj:
        add("answer_shape_invalid", f"projection {index} has no value", base + "/value")
    if "source" not in proj:
        add("answer_shape_invalid", f"projection {index} has no source", base + "/source")
        return out
    source = proj["source"]
    if not isinstance(source, dict):
        add(
            "source_invalid",
            f"the source of projection {index} is {_kind_name(source)}, not an object",
            base + "/source",
        )
        return out
    for key in sorted(set(source) - SOURCE_MEMBERS):
        add(
            "answer_extra_member",
            f"the source of projection {index} carries {_brief(key)}, which is not "
            "document, member, url or digest",
            base + jp.join("source", key),
        )
    for problem, member in source_problems(source):
        add("source_invalid", f"projection {index}: {problem}", base + jp.join("source", member))
    return out


def source_problems(source: dict[str, Any]) -> list[tuple[str, str]]:
    """(problem, source member) pairs for a source object; [] when it can be diffed.

    Shared with the diff, which skips projections whose source names no checkable document.
    """
    problems: list[tuple[str, str]] = []
    document = source.get("document")
    if document not in DOCUMENTS:
        shown = repr(document) if isinstance(document, str) else _kind_name(document)
        problems.append((f'document is {shown}, not "card" or "proposal"', "document"))
    member = source.get("member")
    if "member" not in source:
        problems.append(("the source names no member", "member"))
    elif not isinstance(member, str):
        problems.append((f"member is {_kind_name(member)}, not an RFC 6901 pointer string", "member"))
    else:
        try:
            jp.parse(member)
        except jp.PointerError as exc:
            problems.append((f"member {_brief(member)} is not a valid RFC 6901 pointer: {exc}", "member"))
    for key in ("url", "digest"):
        if key in source and not isinstance(source[key], str):
            problems.append((f"{key} is {_kind_name(source[key])}, not a string", key))
    if document == "proposal":
        if "url" not in source:
            problems.append(("a proposal source carries no url (interview extension 5.1)", "url"))
        if "digest" not in source:
            problems.append(("a proposal source carries no digest (interview extension 5.1)", "digest"))
        elif isinstance(source["digest"], str) and not _DIGEST.fullmatch(source["digest"]):
            problems.append(("digest is not sha256: followed by 64 lowercase hex digits", "digest"))
    return problems


def is_refusal(obj: Any) -> bool:
    """True when `obj` presents itself as a refusal: an object with a `refused` member.

    The test is deliberately loose (any `refused` member) so that a half-formed refusal is read
    as a refusal and reported by `check_refusal`, instead of being mistaken for a bad answer.
    """
    return isinstance(obj, dict) and "refused" in obj


def check_refusal(
    obj: Any,
    skill_ids: Sequence[str],
    *,
    question: str | None = None,
    probe: str | None = None,
) -> list[Finding]:
    """Findings about one standard refusal (the interview extension, section 6); [] when it is exactly right.

    The refusal is exactly `{refused: true, reason, detail, declared_skills}` with `reason` from
    the closed set and `detail` a string (`refusal_shape_invalid` otherwise), and
    `declared_skills` equal to the card's skill ids in card order (`refusal_skills_mismatch`).
    """
    out: list[Finding] = []

    def add(code: str, detail: str, member: str | None = None) -> None:
        out.append(finding(code, detail, question=question, probe=probe, member=member))

    if not isinstance(obj, dict):
        add("refusal_shape_invalid", f"the refusal is {_kind_name(obj)}, not an object")
        return out
    for key in sorted(set(obj) - REFUSAL_MEMBERS):
        add(
            "refusal_shape_invalid",
            f"the refusal carries {_brief(key)}, which is not refused, reason, detail or declared_skills",
            jp.join(key),
        )
    for key in sorted(REFUSAL_MEMBERS - set(obj)):
        add("refusal_shape_invalid", f"the refusal lacks {key}", jp.join(key))
    if "refused" in obj and obj["refused"] is not True:
        add("refusal_shape_invalid", f"refused is {_brief(obj['refused'])}, not true", "/refused")
    if "reason" in obj and obj["reason"] not in REFUSAL_REASONS:
        shown = repr(obj["reason"]) if isinstance(obj["reason"], str) else _kind_name(obj["reason"])
        add(
            "refusal_shape_invalid",
            f"reason is {shown}, outside the closed set " + ", ".join(REFUSAL_REASONS),
            "/reason",
        )
    if "detail" in obj and not isinstance(obj["detail"], str):
        add("refusal_shape_invalid", f"detail is {_kind_name(obj['detail'])}, not a string", "/detail")
    if "declared_skills" in obj:
        skills = obj["declared_skills"]
        if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
            add("refusal_shape_invalid", "declared_skills is not an array of strings", "/declared_skills")
        elif skills != list(skill_ids):
            add(
                "refusal_skills_mismatch",
                f"declared_skills {_brief(skills, 300)} differ from the card's "
                f"skill ids {_brief(list(skill_ids), 300)} (same ids, same order)",
                "/declared_skills",
            )
    return out
