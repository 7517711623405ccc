"""Signed releases: a signed release verifies; one flipped byte in any kind of file fails naming it; a
missing file, another key, an altered signature or list fail each with its own message; files the
signature does not cover are a warning; the private key is owner-only and never overwritten by
accident. Through the command line, and on a small real release with its card."""

from __future__ import annotations

import base64
import json
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

from synth import api
from synth.cli import main
from synth.errors import ReleaseFolderError, SigningError, VerificationError
from synth.sharing.signing import new_key, sign_release, verify_release

pytest.importorskip("cryptography", reason="signing needs the cryptography library (pip install 'synth[sign]')")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small release without a profile, its card in the folder."""
    root = tmp_path_factory.mktemp("signing")
    frame = pd.DataFrame({"city": ["Lyon", "Oslo", "Porto"] * 400, "age": list(range(20, 80)) * 20})
    api.run(frame, root / "release", epsilon=1.0, engine="mst", report_to=None)
    api.card(root / "release", root / "release" / "card.html")
    return root / "release"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("keys")
    private, public = new_key(root / "signer.pem")
    _, other = new_key(root / "other.pem")
    return {"private": private, "public": public, "other": other}


@pytest.fixture
def signed(release: Path, keys: dict[str, Path], tmp_path: Path) -> Path:
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    sign_release(copy, keys["private"])
    return copy


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_signed_release_verifies_and_covers_every_file(signed: Path, keys: dict[str, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    verified = verify_release(signed, keys["public"])
    manifest = json.loads((signed / "manifest.json").read_text())
    assert set(verified.files) == {f["name"] for f in manifest["files"]} | {"manifest.json", "card.html"}
    assert verified.unsigned == ()
    assert main(["verify", str(signed), "--public-key", str(keys["public"])]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("verified: the 6 signed files") and captured.err == ""


@pytest.mark.parametrize("victim", ["synthetic.csv", "synthetic.parquet", "description.json", "description.model.npz",
                                    "manifest.json", "card.html"])
def test_one_flipped_byte_fails_naming_the_file(signed: Path, keys: dict[str, Path], victim: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    flip(signed / victim)
    with pytest.raises(VerificationError, match=rf"{victim}: changed since it was signed"):
        verify_release(signed, keys["public"])
    assert main(["verify", str(signed), "--public-key", str(keys["public"])]) == 2
    error = capsys.readouterr().err
    assert f"{victim}: changed" in error and "Traceback" not in error
    others = [n for n in ("synthetic.csv", "description.json", "manifest.json") if n != victim]
    assert not any(f"{n}: changed" in error for n in others)


def test_a_missing_file_fails_naming_it(signed: Path, keys: dict[str, Path]) -> None:
    (signed / "synthetic.parquet").unlink()
    with pytest.raises(VerificationError, match=r"synthetic.parquet: missing"):
        verify_release(signed, keys["public"])


def test_an_extra_file_is_a_warning_only(signed: Path, keys: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    (signed / "notes.txt").write_text("added after signing")
    assert verify_release(signed, keys["public"]).unsigned == ("notes.txt",)
    assert main(["verify", str(signed), "--public-key", str(keys["public"])]) == 0
    assert "warning: not covered by the signature" in capsys.readouterr().err


def test_another_key_fails(signed: Path, keys: dict[str, Path]) -> None:
    with pytest.raises(VerificationError, match="signed with another key"):
        verify_release(signed, keys["other"])


def tamper(signed: Path, change) -> None:
    path = signed / "signature.json"
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def test_an_altered_signature_or_list_fails(signed: Path, keys: dict[str, Path]) -> None:
    def new_signature(record: dict) -> None:
        raw = bytearray(base64.b64decode(record["signature"]))
        raw[0] ^= 1
        record["signature"] = base64.b64encode(bytes(raw)).decode()

    tamper(signed, new_signature)
    with pytest.raises(VerificationError, match="signature file was altered"):
        verify_release(signed, keys["public"])


def test_a_list_edited_to_match_a_changed_file_fails(signed: Path, keys: dict[str, Path]) -> None:
    """Changing a file and writing its new digest into the list is caught by the signature."""
    from synth.release.manifest import sha256_of

    flip(signed / "synthetic.csv")

    def new_digest(record: dict) -> None:
        for f in record["files"]:
            if f["name"] == "synthetic.csv":
                f["sha256"] = sha256_of(signed / "synthetic.csv")

    tamper(signed, new_digest)
    with pytest.raises(VerificationError, match="signature file was altered"):
        verify_release(signed, keys["public"])


def test_a_damaged_or_missing_signature_file_fails(signed: Path, keys: dict[str, Path]) -> None:
    (signed / "signature.json").write_text("{not json")
    with pytest.raises(VerificationError, match="damaged or not a synth signature"):
        verify_release(signed, keys["public"])
    (signed / "signature.json").unlink()
    with pytest.raises(VerificationError, match="the release is not signed"):
        verify_release(signed, keys["public"])


def test_the_private_key_is_owner_only_and_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "k.pem"
    assert main(["sign", "--new-key", str(key)]) == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert (tmp_path / "k.pub.pem").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    before = key.read_bytes()
    assert main(["sign", "--new-key", str(key)]) == 2
    assert "exists already" in capsys.readouterr().err and key.read_bytes() == before
    assert main(["sign", "--new-key", str(key), "--force"]) == 0 and key.read_bytes() != before


def test_signing_through_the_command_line(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    key = tmp_path / "k.pem"
    assert main(["sign", str(copy), "--new-key", str(key)]) == 0
    assert (copy / "signature.json").is_file()
    assert main(["sign", str(copy), "--key", str(key)]) == 2  # the signature exists: --force to sign again
    assert "exists already" in capsys.readouterr().err
    assert main(["verify", str(copy), "--public-key", str(tmp_path / "k.pub.pem")]) == 0
    assert main(["sign", "--key", str(key)]) == 2
    assert "name the release folder" in capsys.readouterr().err


def test_a_changed_release_is_not_signed(release: Path, keys: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    flip(copy / "synthetic.csv")
    with pytest.raises(ReleaseFolderError, match=r"synthetic.csv: changed"):
        sign_release(copy, keys["private"])
    assert not (copy / "signature.json").exists()


def test_a_key_that_is_not_an_ed25519_key_is_refused(signed: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    with pytest.raises(SigningError, match="not an unencrypted PEM private key"):
        sign_release(signed, bad, force=True)
    with pytest.raises(SigningError, match="not a PEM public key"):
        verify_release(signed, bad)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = tmp_path / "ec.pem"
    other.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with pytest.raises(SigningError, match="not an Ed25519 key"):
        sign_release(signed, other, force=True)
