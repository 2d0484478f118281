"""The runner's signing key on disk, and the runner keys a reader trusts.

`keygen` writes one Ed25519 private key as unencrypted PKCS#8 PEM with mode 0600 (created
with O_EXCL, so an existing key is never overwritten by accident; `--force` replaces it
atomically) and prints the public half as a JWKS whose `kid` is the RFC 7638 thumbprint, which
is exactly what another person passes to `--trust-runner` or lists in `trusted_runners`.

The private key's bytes never leave this module except as the `cryptography` key object handed
to the signer: no message, history row, transcript or export ever holds them. Errors name the
file and the problem, never its content.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.core.attestation import public_jwk, runner_keys
from explorer.core.jsonshape import mapping_of
from explorer.net.files import read_capped

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_FILE = "runner-key.pem"
MAX_KEY_FILE_BYTES = 64 * 1024
_EXISTS = "{target} already exists; it was left untouched (use --force to replace it)"


class RunnerKeyError(Exception):
    """A key file that cannot be written or used; str() says which and why."""


@dataclass(frozen=True)
class RunnerKey:
    """A loaded signing key: the private key object (kept in memory only) and its public JWK."""

    private_key: Ed25519PrivateKey
    jwk: dict[str, Any]
    path: Path

    @property
    def keyid(self) -> str:
        return str(self.jwk["kid"])

    def __repr__(self) -> str:  # never print the private key, even in a traceback
        return f"RunnerKey(keyid={self.keyid!r}, path={str(self.path)!r})"

    def jwks(self) -> dict[str, Any]:
        return {"keys": [dict(self.jwk)]}


def config_path_of(config: Any, text: str) -> Path:
    """A path written in the config file: `~` expanded, relative to the config file's folder."""
    path = Path(text).expanduser()
    where = getattr(config, "path", None)
    if not path.is_absolute() and where is not None:
        path = Path(where).parent / path
    return path


def default_key_path(home: str | os.PathLike[str] | None = None) -> Path:
    """Where `keygen` writes without `--out`: beside the config file."""
    from explorer.config.file import config_path

    return config_path(home).parent / KEY_FILE


def generate(path: str | os.PathLike[str], *, force: bool = False) -> RunnerKey:
    """Create a new Ed25519 key at `path` (mode 0600). RunnerKeyError if it exists and not `force`."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    target = Path(path).expanduser()
    if target.exists() and not force:
        raise RunnerKeyError(_EXISTS.format(target=target))
    if target.is_dir():
        raise RunnerKeyError(f"{target} is a directory, not a key file")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if force:
            _replace(target, pem)
        else:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(pem)
    except FileExistsError:
        raise RunnerKeyError(_EXISTS.format(target=target)) from None
    except OSError as exc:
        raise RunnerKeyError(f"cannot write {target}: {exc.strerror or exc}") from None
    return RunnerKey(key, public_jwk(key), target)


def _replace(target: Path, pem: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str]) -> RunnerKey:
    """The Ed25519 private key of a PKCS#8 PEM file; RunnerKeyError naming the problem."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    source = Path(path).expanduser()
    try:
        data, too_large = read_capped(source, MAX_KEY_FILE_BYTES)
    except FileNotFoundError:
        raise RunnerKeyError(f"no key file at {source} (make one with: interview-explorer keygen)") from None
    except OSError as exc:
        raise RunnerKeyError(f"cannot read the key file {source}: {exc.strerror or exc}") from None
    if too_large:
        raise RunnerKeyError(f"{source} is too large to be a key file")
    try:
        key = load_pem_private_key(data, password=None)
    except TypeError:
        raise RunnerKeyError(f"{source} is encrypted; give an unencrypted PKCS#8 key (mode 0600)") from None
    except ValueError:
        raise RunnerKeyError(f"{source} is not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise RunnerKeyError(f"{source} is not an Ed25519 key (runner keys are Ed25519; see keygen)")
    return RunnerKey(key, public_jwk(key), source)


def loose_permissions(path: Path) -> bool:
    """True when others than the owner may read the key file (POSIX only)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return os.name == "posix" and bool(mode & (stat.S_IRWXG | stat.S_IRWXO))


def trusted_set(jwks: dict[str, Any], own: RunnerKey | None = None) -> dict[str, bytes]:
    """Thumbprint -> raw key of every trusted Ed25519 runner key, plus the reader's own key."""
    trusted = runner_keys(jwks)
    if own is not None:
        trusted.update(runner_keys(own.jwks()))
    return trusted


MAX_JWKS_FILE_BYTES = 1024 * 1024


def trusted_from_files(paths: list[Path], own: Path | None = None) -> tuple[dict[str, bytes], list[str]]:
    """The trusted runner keys of JWKS files (and the public half of the reader's own key file),
    with a note for each file that could not be used. Files only: the TUI reads these on the
    event loop's side and must never wait for the network."""
    import json

    trusted: dict[str, bytes] = {}
    notes: list[str] = []
    for path in paths:
        try:
            data = json.loads(read_capped(path.expanduser(), MAX_JWKS_FILE_BYTES)[0])
        except (OSError, ValueError) as exc:
            notes.append(f"trusted runner keys {path} not used: {exc}")
            continue
        trusted.update(runner_keys(mapping_of(data)))
    if own is not None:
        try:
            trusted.update(runner_keys(load(own).jwks()))
        except RunnerKeyError as exc:
            notes.append(f"your sign_key is not trusted here: {exc}")
    return trusted, notes
