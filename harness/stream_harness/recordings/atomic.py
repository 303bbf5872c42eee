"""The one way stream-harness replaces a file it writes: cassettes, goldens, report files.

A temporary file in the target's folder (same file system, so the final rename is atomic),
flushed and fsynced, then ``os.replace``d over the target: a reader, a crash or Ctrl-C
sees the old file or the new one, never half of one. It lives here, in the lowest stage
that writes files (cassettes), so that ``workflow`` (bless) and ``reporting`` use it too.

The temporary file is created by ``os.open(..., 0o666)``, not ``tempfile.mkstemp``: the
kernel then applies the umask (and a folder's default ACL) exactly as it does for a plain
``open(path, "w")``, so a committed cassette or a published report is 0644 under umask
022, not mkstemp's private 0600, without reading the process-wide umask (``os.umask`` can
only be read by setting it, which races with other threads).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["write_atomic"]

_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new file beside the target, named so a listing shows whose it is (``.name.*.tmp``)."""
    for _attempt in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no free temporary name for {name}")  # pragma: no cover


def write_atomic(path: Path | str, data: bytes | str, *, errors: str = "strict") -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, newlines untranslated).

    ``errors`` is the encoding's error handler for text: reports pass
    ``backslashreplace`` so that a lone surrogate in a message (bytes decoded with
    surrogateescape) cannot abort the write. The folder is created when missing. The mode
    is what a plain ``open()`` would give a new file (``0o666 & ~umask``), also when the
    target existed with another one: a report folder written by an older version with
    0600 files becomes readable again.
    """
    path = Path(path)
    payload = data.encode("utf-8", errors) if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
