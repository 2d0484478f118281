"""JSON-RPC 2.0 framing for the reference agents: strict request parsing and response bytes.

The agents are a reference for builders, so malformed requests get exactly the errors the
JSON-RPC 2.0 specification names, with HTTP 200 as A2A does: -32700 when the body is not JSON
(invalid UTF-8, syntax, duplicate keys, NaN, nesting past what the parser survives), -32600 when
it is JSON but not a request object (batches included: A2A does not use them), and the caller
decides -32601/-32602. Request content is only ever compared, never echoed into messages, with
one exception the specification requires: a valid `id` is returned as given.

Responses are built as bytes. A cached answer is serialised once, and `result_body` splices
those bytes into the envelope, so a 1 MB answer costs a concatenation per request, not a
re-encoding. `dumps` keeps non-ASCII as UTF-8 and integers exact (beyond 2^53 too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_ERROR = -32000  # implementation-defined range: rate limiting, oversized bodies, refusals

MAX_BODY = 64 * 1024


class RpcError(Exception):
    """A request that must be answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


@dataclass(frozen=True)
class RpcRequest:
    """One well-formed request. `params` is None when absent; `is_notification` when `id` is."""

    method: str
    request_id: Any
    params: dict[str, Any] | list[Any] | None
    is_notification: bool


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate("duplicate object key")
        out[key] = value
    return out


def _no_constants(literal: str) -> Any:
    raise ValueError(f"{literal} is not JSON")


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse_request(body: bytes) -> RpcRequest:
    """Parse and validate one JSON-RPC request; RpcError carries the error to send."""
    try:
        text = body.decode("utf-8")
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except _Duplicate:
        raise RpcError(PARSE_ERROR, "Parse error: duplicate object key") from None
    except UnicodeDecodeError:
        raise RpcError(PARSE_ERROR, "Parse error: the body is not UTF-8") from None
    except RecursionError:
        raise RpcError(PARSE_ERROR, "Parse error: nested too deeply") from None
    except ValueError:
        raise RpcError(PARSE_ERROR, "Parse error: the body is not JSON") from None
    if isinstance(doc, list):
        raise RpcError(INVALID_REQUEST, "Invalid Request: batch requests are not supported")
    if not isinstance(doc, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    request_id = doc.get("id")
    if not _valid_id(request_id):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string, an integer or null")
    if doc.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', request_id)
    method = doc.get("method")
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a string", request_id)
    params = doc.get("params")
    if "params" in doc and not isinstance(params, (dict, list)):
        raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object or an array", request_id)
    return RpcRequest(method, request_id, params, "id" not in doc)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, integers exact."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def result_body(request_id: Any, result: bytes) -> bytes:
    """A success response around an already-serialised result."""
    return b'{"jsonrpc":"2.0","id":' + dumps(request_id) + b',"result":' + result + b"}"


def error_body(
    request_id: Any, code: int, message: str, data: Any = None, *, with_data: bool = False
) -> bytes:
    """An error response; `data` is included only when `with_data` is set."""
    error: dict[str, Any] = {"code": code, "message": message}
    if with_data:
        error["data"] = data
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
