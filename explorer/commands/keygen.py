"""`interview-explorer keygen [--out PATH] [--force]`: a runner's Ed25519 signing key.

Writes the private key as unencrypted PKCS#8 PEM with mode 0600 (default: `runner-key.pem`
beside the config file, so under `--home DIR` when given) and prints the public key on stdout
as a JWKS whose `kid` is the key's RFC 7638 thumbprint. That JWKS is what someone else passes
to `verify --offline ... --trust-runner FILE` (or lists in `trusted_runners`) to accept this
runner's signed results as evidence. An existing key is never overwritten without `--force`.
The private key is never printed.

Exit status: 0 written, 1 the key file exists or cannot be written, 2 usage error.
"""

from __future__ import annotations

import argparse

from explorer.commands.common import EXIT_DIFFERENT, EXIT_OK, add_home_argument, print_json, say

COMMAND = "keygen"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="where to write the private key (default: runner-key.pem beside the config file)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing key file")
    add_home_argument(parser, "the default key file and config live", history=False)


def run(args: argparse.Namespace) -> int:
    from explorer.core.text import safe_text
    from explorer.evidence.runner_keys import RunnerKeyError, default_key_path, generate

    path = args.out or default_key_path(args.home)
    try:
        key = generate(path, force=args.force)
    except RunnerKeyError as exc:
        say(safe_text(str(exc), limit=500), COMMAND)
        return EXIT_DIFFERENT
    print_json(key.jwks(), indent=2)
    where = safe_text(str(key.path), limit=300)
    say(f"wrote the private key to {where} (mode 0600; keep it secret)", COMMAND)
    say(
        f"key {key.keyid}; sign with: verify TARGET --sign-key {where} --runner NAME --as independent",
        COMMAND,
    )
    say("give the JWKS above to whoever should trust your results (--trust-runner FILE)", COMMAND)
    return EXIT_OK
