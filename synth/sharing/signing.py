"""Ed25519 signatures of a release folder, so a recipient can check that the files they hold are the
files approved.

``new_key`` writes a private key (owner-only, mode 0600) and its public key beside it. ``sign_release``
signs a canonical statement of every file of the release (name, size, SHA-256): the files its
manifest lists, the manifest itself and any release card in the folder, after checking them against
the manifest; it writes ``signature.json`` into the folder. ``verify_release`` checks the signature
with a public key and every file's size and digest, naming each file that fails. It uses the
``cryptography`` library (imported when needed); it never reads the private data, and never
accepts a release whose signature or files it could not check.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from synth.errors import SigningError, VerificationError
from synth.files import atomic_write, atomic_write_text, check_writable
from synth.release.manifest import sha256_of
from synth.sharing.folder import MANIFEST, SIGNATURE, folder_files, inside, is_card, read_folder

ALGORITHM = "Ed25519"
STATEMENT_FORMAT = "synth signed release"
SIGNATURE_FORMAT = "synth release signature"
VERSION = 1


def _serialization() -> tuple[ModuleType, ModuleType]:
    """cryptography's ed25519 and serialization modules; SigningError saying how to install it."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:
        raise SigningError("signing needs the cryptography library, which is not installed: "
                           "pip install 'synth[sign]'.") from exc
    return ed25519, serialization


def public_key_path(private: Path) -> Path:
    """Where the public key of the private key at ``private`` goes: KEY.pem -> KEY.pub.pem."""
    return private.with_name(f"{private.name.removesuffix('.pem')}.pub.pem")


def new_key(path: str | os.PathLike[str], force: bool = False) -> tuple[Path, Path]:
    """Write a new Ed25519 private key to ``path`` (mode 0600) and its public key beside it."""
    ed25519, serialization = _serialization()
    private_path = Path(path)
    public_path = public_key_path(private_path)
    for target in (private_path, public_path):
        check_writable(target, force)
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    atomic_write(private_path, lambda tmp: tmp.write_bytes(private_pem), force=force)  # owner only: mode 0600
    atomic_write(public_path, lambda tmp: tmp.write_bytes(public_pem), force=force, shared=True)
    return private_path, public_path


def _read_pem(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read the {what} {path} ({exc.strerror}). Check the path.") from exc


def _private_key(path: Path) -> Any:
    ed25519, serialization = _serialization()
    try:
        key = serialization.load_pem_private_key(_read_pem(path, "private key"), password=None)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not an unencrypted PEM private key ({exc}). Make one with "
                           "`synth sign --new-key KEY.pem`.") from exc
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, not an Ed25519 key. Make one with "
                           "`synth sign --new-key KEY.pem`.")
    return key


def _public_key(path: Path) -> Any:
    ed25519, serialization = _serialization()
    try:
        key = serialization.load_pem_public_key(_read_pem(path, "public key"))
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not a PEM public key ({exc}). Pass the KEY.pub.pem written beside the signing "
                           "key.") from exc
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, not an Ed25519 public key.")
    return key


def fingerprint(public_key: Any) -> str:
    """The SHA-256 of the raw 32-byte public key, in hex."""
    _, serialization = _serialization()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def statement(files: list[dict[str, Any]]) -> bytes:
    """The bytes signed: the files (name, bytes, sha256), sorted by name, as canonical JSON."""
    listed = sorted(({"name": str(f["name"]), "bytes": int(f["bytes"]), "sha256": str(f["sha256"])} for f in files),
                    key=lambda f: str(f["name"]))
    return json.dumps({"format": STATEMENT_FORMAT, "version": VERSION, "files": listed}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True).encode("ascii")


def signed_names(folder: Path) -> list[str]:
    """What a signature covers: the manifest's files, the manifest and every release card in the folder."""
    release = read_folder(folder)  # refuses a folder whose files differ from its manifest
    cards = [n for n in folder_files(folder) if is_card(folder / n)]
    return sorted({*(f.name for f in release.files), MANIFEST, *cards})


def sign_release(release: str | os.PathLike[str], key: str | os.PathLike[str], force: bool = False) -> Path:
    """Sign the release in ``release`` with the private key at ``key``; write signature.json into it."""
    folder = Path(release)
    target = folder / SIGNATURE
    check_writable(target, force)
    private = _private_key(Path(key))
    files = [{"name": n, "bytes": (folder / n).stat().st_size, "sha256": sha256_of(folder / n)}
             for n in signed_names(folder)]
    signature = private.sign(statement(files))
    record = {"format": SIGNATURE_FORMAT, "version": VERSION, "algorithm": ALGORITHM,
              "public_key_fingerprint": fingerprint(private.public_key()),
              "files": files, "signature": base64.b64encode(signature).decode("ascii")}
    return atomic_write_text(target, json.dumps(record, indent=2) + "\n", force=force, shared=True)


@dataclass(frozen=True)
class Verified:
    """A release that verified: the files the signature covers, the key's fingerprint, and the files
    in the folder the signature does not cover (a warning, not a failure)."""

    files: tuple[str, ...]
    fingerprint: str
    unsigned: tuple[str, ...]


def _read_signature(folder: Path) -> dict[str, Any]:
    path = folder / SIGNATURE
    if not path.is_file():
        raise VerificationError(f"{folder} holds no {SIGNATURE}: the release is not signed (or the signature was "
                                "removed). Ask the sender for the signed release.")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        valid = (isinstance(record, dict) and record.get("format") == SIGNATURE_FORMAT
                 and isinstance(record.get("files"), list) and isinstance(record.get("signature"), str)
                 and all(isinstance(f, dict) and {"name", "bytes", "sha256"} <= set(f) for f in record["files"]))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        valid = False
    if not valid:
        raise VerificationError(f"{path} is damaged or not a synth signature: it cannot be checked. Do not trust the "
                                "release; ask the sender for it again.")
    if record.get("algorithm") != ALGORITHM:
        raise VerificationError(f"{path} states the algorithm {record.get('algorithm')!r}; synth verifies {ALGORITHM} "
                                "signatures only.")
    return record


def verify_release(release: str | os.PathLike[str], public_key: str | os.PathLike[str]) -> Verified:
    """Check the release's signature with ``public_key`` and every signed file against it.

    VerificationError when the key is not the signer's, the signature does not match its list (the
    list or the signature was altered), or a signed file is missing or changed (each one named)."""
    folder = Path(release)
    key = _public_key(Path(public_key))  # first: it says how to install cryptography when it is missing
    from cryptography.exceptions import InvalidSignature

    record = _read_signature(folder)
    mine = fingerprint(key)
    if record.get("public_key_fingerprint") != mine:
        raise VerificationError(
            f"the release was signed with another key (fingerprint {record.get('public_key_fingerprint')}) than the "
            f"public key given ({public_key}, fingerprint {mine}). Use the sender's public key, obtained from them "
            "directly.")
    try:
        signature = base64.b64decode(record["signature"], validate=True)
        key.verify(signature, statement(record["files"]))
    except (InvalidSignature, binascii.Error, ValueError, TypeError) as exc:
        raise VerificationError(f"the signature in {folder / SIGNATURE} does not match its list of files: the "
                                "signature file was altered. Do not trust the release; ask the sender for it "
                                "again.") from exc
    problems = []
    for listed in record["files"]:
        path = inside(folder, str(listed["name"]))
        if not path.is_file():
            problems.append(f"{listed['name']}: missing")
        elif path.stat().st_size != int(listed["bytes"]) or sha256_of(path) != listed["sha256"]:
            problems.append(f"{listed['name']}: changed since it was signed")
    if problems:
        raise VerificationError(f"the files in {folder} are not the files signed: {'; '.join(problems)}. Do not use "
                                "them; ask the sender for the release again.")
    names = tuple(str(f["name"]) for f in record["files"])
    unsigned = tuple(n for n in folder_files(folder) if n not in names and n != SIGNATURE)
    return Verified(names, mine, unsigned)
