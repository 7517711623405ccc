"""Safe output files: every file synth writes appears whole or not at all.

Writers go to a temporary file in the target directory and rename it into place, so an
interrupted run never leaves a half-written Description or CSV. A set of files that belong
together (a release) is written into a hidden staging folder and moved into place only once all
of them are complete. Existing files are not replaced unless ``force`` is given.

Permissions: a *shared* output (a file of the release: synthetic table, Description, manifest,
saved model, inspection report — all derived from the Description, meant to be passed on) is
created as any tool creates a file, read-write for all less the user's umask (``-rw-r--r--``
under umask 022). Any other output (an evaluation, which reads the original data, or a profile
drafted from it) is readable by its owner only (``-rw-------``), whatever the umask.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from synth.errors import OutputError


def check_writable(path: Path, force: bool) -> None:
    """Raise OutputError if ``path`` exists and ``force`` is False, or its folder is missing."""
    if path.exists() and not force:
        raise OutputError(
            f"{path} exists already. Choose another output path, or pass --force "
            "(force=True) to replace it."
        )
    if not path.parent.is_dir():
        raise OutputError(
            f"cannot write {path}: the folder {path.parent} does not exist. Create it first."
        )


SHARED_MODE = 0o666  # less the umask, as open() creates files
PRIVATE_MODE = 0o600  # owner only, whatever the umask


def _new_temporary(folder: Path, name: str, mode: int) -> Path:
    """Create an empty file with a fresh hidden name in ``folder``, with permissions ``mode`` less the
    umask (the system applies it, so nothing reads or changes the process's umask)."""
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
        except FileExistsError:
            continue
        return tmp


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object], force: bool = False,
                 shared: bool = False) -> Path:
    """Call ``write(tmp_path)`` and rename the temporary file to ``path`` once it succeeded.

    ``shared``: the file is part of a release, created with the umask's permissions; otherwise
    readable by its owner only (see the module docstring)."""
    target = Path(path)
    check_writable(target, force)
    tmp = _new_temporary(target.parent, target.name, SHARED_MODE if shared else PRIVATE_MODE)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str, force: bool = False, shared: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (``shared`` as in ``atomic_write``)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), force, shared)


@contextmanager
def staged_release(out_dir: Path, names: list[str], force: bool = False) -> Iterator[Path]:
    """Yield a staging folder inside ``out_dir``; on success move ``names`` from it into place.

    If the body raises (or is interrupted), the staging folder is removed and ``out_dir`` keeps
    what it had: no partial release. The moves themselves run with SIGINT and SIGTERM held
    back, so an interrupt lands after the last file is in place, not between two of them (a
    release of new and old files).
    """
    for name in names:
        check_writable(out_dir / name, force)
    stage = Path(tempfile.mkdtemp(prefix=".synth-staging-", dir=out_dir))
    try:
        yield stage
        with _interrupts_held():
            for name in names:
                if (stage / name).exists():
                    os.replace(stage / name, out_dir / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back in the body: one that arrives is noted and raised again when
    the body ends, to the handler in force before. Python runs signal handlers in the main
    thread whichever thread the system signals, so this holds in the main thread only (and for
    handlers Python can restore); elsewhere the body runs as it is."""
    signals = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is not None]
    if threading.current_thread() is not threading.main_thread() or not signals:
        yield
        return
    received: list[int] = []
    previous = {s: signal.signal(s, lambda number, frame: received.append(number)) for s in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if received:
            signal.raise_signal(received[0])
