"""What an adapter's crash says: the exception, and where in the user's code it happened.

``the adapter crashed: json.decoder.JSONDecodeError: Unterminated string ...`` names no
file: the user must rerun under a debugger to find which of their lines parsed what. The
traceback is there when the crash is caught, so the line says it: the innermost frames
of the code under test, each as ``file:line in function: the line's text``. The harness's
own frames (the module ``stream_harness`` and below: the runner, the deadline thread)
and the standard library's (``json/decoder.py`` tells nothing) are left out; when only
those remain (a crash inside the standard library called by the harness), the innermost
frames outside the harness are shown. One line, so that the console, the pytest failure
and report.jsonl carry it alike.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path
from types import TracebackType
from typing import Final

from stream_harness.recordings.inputs import display_path

# How many of the innermost frames of the user's code a crash line shows.
FRAMES_SHOWN: Final = 2
_STDLIB = tuple(
    str(Path(p).resolve())
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)


def crash_text(exc: BaseException) -> str:
    """``Type: message (at file:line in f: text; called from ...)`` for a caught exception."""
    head = traceback.format_exception_only(type(exc), exc)[-1].strip()
    where = user_frames(exc.__traceback__)
    if not where:
        return head
    shown = [
        f"{display_path(Path(f.filename))}:{f.lineno} in {f.name}"
        + (f": {f.line.strip()}" if f.line else "")
        for f in where
    ]
    return f"{head} (at {'; called from '.join(shown)})"


def user_frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    """The innermost frames of the code under test, innermost first (see the module docstring)."""
    walked = list(traceback.walk_tb(tb))
    outside = [
        i for i, (frame, _) in enumerate(walked) if not _is_ours(frame.f_globals.get("__name__"))
    ]
    if not outside:
        return []
    frames = traceback.StackSummary.extract(walked, lookup_lines=True)
    theirs = [i for i in outside if not _in_stdlib(frames[i].filename)] or outside
    return [frames[i] for i in reversed(theirs[-FRAMES_SHOWN:])]


def _is_ours(module: object) -> bool:
    return isinstance(module, str) and (
        module == "stream_harness" or module.startswith("stream_harness.")
    )


def _in_stdlib(filename: str) -> bool:
    if filename.startswith("<"):  # <frozen ...>, <string>
        return True
    resolved = str(Path(filename).resolve())
    return (
        resolved.startswith(_STDLIB)
        and "site-packages" not in resolved
        and "dist-packages" not in resolved
    )
