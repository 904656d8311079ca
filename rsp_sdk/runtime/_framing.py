"""Length-prefixed frames over a stream socket, with deadlines.

The JPype runtime talks to its worker process over a socketpair: a JSON header frame per
request/response, plus one raw payload frame for drained results (batches go through shared
memory). Every send
and receive honours a deadline (``time.monotonic()`` seconds), so a worker that stops reading or
answering turns into a ``TimeoutError`` instead of a blocked run.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any

_LEN = struct.Struct("!Q")


class ChannelClosed(EOFError):
    """The peer closed its end (it exited or crashed)."""


class FramedSocket:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def _settimeout(self, deadline: float | None) -> None:
        if deadline is None:
            self.sock.settimeout(None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        self.sock.settimeout(remaining)

    def send(self, data: bytes | bytearray | memoryview, deadline: float | None = None) -> None:
        view = memoryview(data).cast("B")
        try:
            self._settimeout(deadline)
            self.sock.sendall(_LEN.pack(view.nbytes))
            sent = 0
            while sent < view.nbytes:  # sendall cannot renew the timeout between chunks
                self._settimeout(deadline)
                sent += self.sock.send(view[sent : sent + (1 << 22)])
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosed(str(exc)) from exc
        except TimeoutError:  # socket.timeout is TimeoutError
            raise
        except OSError as exc:
            raise ChannelClosed(str(exc)) from exc

    def _recv_exact(self, n: int, deadline: float | None) -> bytearray:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        try:
            while got < n:
                self._settimeout(deadline)
                k = self.sock.recv_into(view[got:], min(n - got, 1 << 22))
                if k == 0:
                    raise ChannelClosed("peer closed the channel")
                got += k
        except ConnectionResetError as exc:
            raise ChannelClosed(str(exc)) from exc
        return buf

    def recv(self, deadline: float | None = None) -> bytearray:
        (n,) = _LEN.unpack(self._recv_exact(_LEN.size, deadline))
        return self._recv_exact(n, deadline) if n else bytearray()

    def send_json(self, value: Any, deadline: float | None = None) -> None:
        self.send(json.dumps(value, separators=(",", ":")).encode(), deadline)

    def recv_json(self, deadline: float | None = None) -> Any:
        return json.loads(self.recv(deadline))

    def close(self) -> None:
        self.sock.close()


def deadline_of(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout
