"""`interview-explorer envelope`: check an A2A message's OpenClasp trust envelope offline.

    interview-explorer envelope MESSAGE.json [--contract CONTRACT.json] [--uri URI] [--json]
    interview-explorer envelope --hash CONTRACT.json [--json]

MESSAGE.json is an A2A message or a JSON-RPC `message/send` request. With a contract, the terms
hash is recomputed and compared; `--hash` alone just prints a contract's terms hash. Nothing
goes to the network: this is a file check for people wiring OpenClasp into their own agents.

Exit status: 0 valid (and the hash matches when a contract is given), 1 invalid or mismatch,
2 usage error (a missing or unreadable file, or one that is not JSON).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from explorer.commands.common import print_json, print_lines, say

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_NOT_JSON = EXIT_USAGE  # a file that is not JSON is not a message (or contract) to check


class _Exit(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", metavar="FILE", help="an A2A message or a JSON-RPC message/send request (JSON)"
    )
    parser.add_argument(
        "--contract",
        metavar="CONTRACT.json",
        help="the OpenClasp contract whose terms hash the envelope must carry",
    )
    parser.add_argument(
        "--hash",
        dest="hash_only",
        metavar="CONTRACT.json",
        help="print the terms hash of a contract and exit",
    )
    parser.add_argument(
        "--uri", default=None, help="the extension URI the envelope is keyed by (default: the OpenClasp URI)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def _load(path_text: str, what: str) -> Any:
    from explorer.core.strict_json import StrictJsonError, parse
    from explorer.core.text import safe_text

    path = Path(path_text)
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _Exit(EXIT_USAGE, f"cannot read {what} {safe_text(path_text)}: {reason}") from None
    try:
        return parse(data)
    except StrictJsonError as exc:
        reason = safe_text(str(exc))
        raise _Exit(EXIT_NOT_JSON, f"{what} {safe_text(path_text)} is not JSON: {reason}") from None


def run(args: argparse.Namespace) -> int:
    try:
        if args.hash_only is not None:
            if args.file is not None or args.contract is not None:
                raise _Exit(EXIT_USAGE, "--hash takes only a contract; use --contract to check an envelope")
            return _print_hash(args)
        if args.file is None:
            raise _Exit(EXIT_USAGE, "give a message FILE to check, or --hash CONTRACT.json")
        return _check(args)
    except _Exit as exc:
        say(exc.message, "envelope")
        return exc.code


def _print_hash(args: argparse.Namespace) -> int:
    from explorer.core.canonical import CanonicalError
    from explorer.core.envelope import terms_hash

    contract = _load(args.hash_only, "contract")
    try:
        value = terms_hash(contract)
    except CanonicalError as exc:
        raise _Exit(EXIT_INVALID, f"the contract has no canonical form: {exc}") from None
    if args.json:
        print_json({"terms_hash": value})
    else:
        print(value)
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from explorer.core.card import OPENCLASP_URI
    from explorer.core.envelope import check_envelope

    message = _load(args.file, "message")
    contract = _load(args.contract, "contract") if args.contract is not None else None
    result = check_envelope(message, contract, uri=args.uri or OPENCLASP_URI)
    if args.json:
        print_json(result.to_json())
    else:
        print_lines(_human(result, with_contract=contract is not None))
    return EXIT_OK if result.ok else EXIT_INVALID


def _human(result: Any, *, with_contract: bool) -> list[str]:
    from explorer.core.text import safe_text

    lines = [f"extension URI: {safe_text(result.uri)}"]
    if result.envelope is not None:
        for name, value in result.envelope.items():
            lines.append(f"  {safe_text(name, limit=80)}: {safe_text(value, limit=200)}")
    if with_contract and result.computed_hash is not None:
        verdict = "matches" if result.hash_match else "does NOT match"
        lines.append(f"contract terms hash: {result.computed_hash} ({verdict} the envelope)")
    lines += [f"error: {safe_text(problem)}" for problem in result.problems]
    lines += [f"warning: {safe_text(warning)}" for warning in result.warnings]
    lines.append("valid" if result.ok else "INVALID")
    return lines
