"""The command line's sharing verbs: ``synth card``, ``synth sign`` and ``synth verify``.

``add_parsers`` registers them on the ``synth`` parser; each ``cmd_*`` runs one. This module imports
only the standard library at the top (``synth --help`` stays fast); the card and signing modules are
imported when a command runs. It never reads the private data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from synth.errors import SigningError

if TYPE_CHECKING:
    from synth.progress import Progress


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the card, sign and verify subcommands to ``sub``."""
    p = sub.add_parser("card", help="write the release card: one printable page on what was released and its "
                       "guarantee, for the person who approves the sharing",
                       description="Write the release card of a release folder: what was released and left out, the "
                       "guarantee in plain words (and every place it does not hold end to end), public input, where "
                       "the budget went, the utility and attacks of an evaluation when given, every file's SHA-256 "
                       "(checked against the manifest: a changed file stops the card) and an annex text to quote.")
    p.add_argument("release", type=Path, help="the release folder `synth run` (or `synth demo`) wrote")
    p.add_argument("-o", "--out", type=Path, required=True, help="the card to write (HTML)")
    p.add_argument("--evaluation", type=Path, metavar="JSON", help="the evaluation's JSON (`synth evaluate ... --json`): "
                   "its utility and attack results go on the card (not DP: the card is then for the data owner)")
    p.add_argument("--force", action="store_true", help="replace the card if it exists")

    p = sub.add_parser("sign", help="sign a release folder's files with an Ed25519 key (signature.json), or make a key",
                       description="Sign a release: its manifest's files, the manifest and any release card in the "
                       "folder, each by name, size and SHA-256, into RELEASE/signature.json. --new-key KEY.pem makes "
                       "a key pair first (KEY.pem, owner-only, and KEY.pub.pem to hand to recipients).")
    p.add_argument("release", type=Path, nargs="?", help="the release folder to sign (leave out to only make a key)")
    keys = p.add_mutually_exclusive_group(required=True)
    keys.add_argument("--key", type=Path, metavar="KEY.pem", help="the private key to sign with")
    keys.add_argument("--new-key", type=Path, metavar="KEY.pem", help="make a new key pair here (and sign with it "
                      "when RELEASE is given)")
    p.add_argument("--force", action="store_true", help="replace a key or signature.json that exists")

    p = sub.add_parser("verify", help="check that a signed release's files are the files signed",
                       description="Check RELEASE/signature.json with the signer's public key and every signed file's "
                       "size and SHA-256. Fails naming each missing or changed file; files the signature does not "
                       "cover are named as a warning.")
    p.add_argument("release", type=Path, help="the signed release folder")
    p.add_argument("--public-key", type=Path, required=True, metavar="KEY.pub.pem", help="the signer's public key")


def cmd_card(args: argparse.Namespace, progress: Progress) -> None:
    from synth.sharing.card import write_card

    write_card(args.release, args.out, args.evaluation, force=args.force)
    print(f"wrote the release card to {args.out}")


def cmd_sign(args: argparse.Namespace, progress: Progress) -> None:
    from synth.sharing.signing import new_key, sign_release

    key = args.key
    if args.new_key is not None:
        key, public = new_key(args.new_key, force=args.force)
        print(f"wrote the private key to {key} (keep it secret) and the public key to {public} (give it to recipients)")
    elif args.release is None:
        raise SigningError("name the release folder to sign: synth sign RELEASE --key KEY.pem.")
    if args.release is not None:
        path = sign_release(args.release, key, force=args.force)
        print(f"signed the release in {args.release}: wrote {path}")


def cmd_verify(args: argparse.Namespace, progress: Progress) -> None:
    from synth.sharing.signing import verify_release

    verified = verify_release(args.release, args.public_key)
    if verified.unsigned:
        print(f"warning: not covered by the signature (not vouched for): {', '.join(verified.unsigned)}", file=sys.stderr)
    print(f"verified: the {len(verified.files)} signed files in {args.release} are the files signed with the key "
          f"{verified.fingerprint[:16]}…")


COMMANDS = {"card": cmd_card, "sign": cmd_sign, "verify": cmd_verify}
