"""The line of a dead engine's log that says why it died.

A crash message quotes the log's tail, but tables and progress lines show a reason's first line
only — and a tail often ends in a stack trace (Node.js prints thirty native frames after "FATAL
ERROR: … JavaScript heap out of memory", the JVM a page of ``at`` lines after the exception).
So the first line of a crash message names the cause, picked from the tail here.
"""

from __future__ import annotations

import re
from pathlib import Path

# an error's headline in the languages our engines are written in: Node.js' fatal errors, JVM
# and JavaScript exceptions ("java.lang.OutOfMemoryError: …", "TypeError: …"), Python's last
# traceback line, Rust's "thread 'main' panicked at …", the kernel's "Killed"
_ERROR = re.compile(
    r"FATAL ERROR|[A-Za-z]*(Error|Exception)\b|panicked at|^error(\[\w+\])?:|^Killed$|Out of memory"
)
# a stack frame or a banner: never the cause, even when a frame's name says "Error"
_FRAME = re.compile(r"^\s*(at |\d+: 0x|#\d+ |\.\.\. \d+ more|File \"|-{3,}|<-{3}|={3,})|^\s+")
_LIMIT = 200


def cause(tail: str) -> str | None:
    """The last line of ``tail`` naming an error, else its last line that is not a frame."""
    lines = tail.splitlines()
    kept = [i for i, line in enumerate(lines) if line.strip() and not _FRAME.match(line)]
    errors = [i for i in kept if _ERROR.search(lines[i])]
    if not kept:
        return None
    at = errors[-1] if errors else kept[-1]
    line = lines[at].strip()
    if line.endswith(":") and at + 1 < len(lines):
        line = f"{line} {lines[at + 1].strip()}".strip()  # Rust: a panic's message comes next
    return line if len(line) <= _LIMIT else line[: _LIMIT - 1] + "…"


def died(head: str, log_path: Path, tail: str) -> str:
    """``head`` (who died, how), the cause from the log, then the log's tail to read on."""
    if not tail:
        return head
    why = cause(tail)
    return f"{head}{': ' + why if why else ''}; log {log_path} ends with:\n{tail}"
