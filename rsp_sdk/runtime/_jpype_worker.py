"""The JPype worker: one process, one JVM, one engine driver.

Started by ``rsp_sdk.runtime.jpype`` as ``python -m rsp_sdk.runtime._jpype_worker CTL_FD
STATS_FD``. JPype cannot restart a JVM in a process and some engines keep JVM-wide singletons
(CQELS's Esper), so every engine session gets a fresh worker. The worker:

1. reads the JVM settings from the control socket, starts the JVM, builds the
   ``org.rspsdk.bridge.Bridge`` around the driver class, and answers ``{"ok": true}``;
2. serves control requests (JSON header frames) by calling the Bridge in-process; packed batches
   do not cross the socket: the parent writes them into a shared memory segment (a memfd whose
   fd it passes once with SCM_RIGHTS), Java reads them from a direct ByteBuffer over it;
3. serves ``stats`` on a second socket from its own thread, so the sampler gets heap and GC
   numbers while a long push holds the control lane;
4. exits at once when its stdin (the parent's lifeline) or the control socket closes.

Java's ``System.out``/``System.err`` are this process's fds 1 and 2, which the parent points at
the engine log: engine chatter never mixes with the protocol.
"""

from __future__ import annotations

import json
import mmap
import os
import socket
import sys
import threading
from typing import Any

from rsp_sdk.runtime._framing import ChannelClosed, FramedSocket


def _lifeline() -> None:
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    os._exit(0)


def _error(exc: BaseException, bridge_cls: Any) -> dict[str, Any]:
    import jpype

    if isinstance(exc, jpype.JException):
        return {
            "ok": False,
            "error": str(bridge_cls.describe(exc)),
            "trace": str(bridge_cls.trace(exc)),
            "type": str(exc.getClass().getName()),
        }
    return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": None, "type": None}


def _serve_stats(lane: FramedSocket, bridge: Any, bridge_cls: Any) -> None:
    while True:
        try:
            lane.recv()
        except (ChannelClosed, OSError):
            return
        try:
            reply: dict[str, Any] = {"ok": True, "result": json.loads(str(bridge.stats()))}
        except Exception as exc:
            reply = _error(exc, bridge_cls)
        try:
            lane.send_json(reply)
        except (ChannelClosed, OSError):
            return


def main(argv: list[str]) -> int:
    threading.Thread(target=_lifeline, name="lifeline", daemon=True).start()
    ctl = FramedSocket(socket.socket(fileno=int(argv[0])))
    stats = FramedSocket(socket.socket(fileno=int(argv[1])))
    init = ctl.recv_json()
    try:
        import jpype
        import jpype.nio

        flags = list(init.get("jvm_flags", []))
        flags += [f"-D{k}={v}" for k, v in init.get("properties", {}).items()]
        jpype.startJVM(*flags, classpath=init["classpath"], convertStrings=False)
        bridge_cls = jpype.JClass("org.rspsdk.bridge.Bridge")
        bridge = bridge_cls(init["driver_class"])
        java_version = str(jpype.java.lang.System.getProperty("java.version"))
    except BaseException as exc:
        reply: dict[str, Any] = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "trace": None,
        }
        if "jpype" in sys.modules and isinstance(exc, sys.modules["jpype"].JException):
            reply["trace"] = str(exc.stacktrace())
        ctl.send_json(reply)
        return 3
    ctl.send_json({"ok": True, "result": {"pid": os.getpid(), "java_version": java_version}})
    threading.Thread(
        target=_serve_stats, args=(stats, bridge, bridge_cls), name="stats", daemon=True
    ).start()

    segment: mmap.mmap | None = None  # kept referenced while Java holds a view of it
    shared: Any = None
    while True:
        try:
            header = ctl.recv_json()
        except (ChannelClosed, OSError):
            return 0
        verb = header["verb"]
        args = header.get("args", [])
        payload: bytes | None = None
        try:
            result: Any = None
            if verb == "push":
                # the batch is already in the shared segment: Java reads it from there
                bridge.pushBuffer(args[0], shared, int(args[1]))
            elif verb == "_segment":
                # a new shared segment: its fd follows the header as SCM_RIGHTS ancillary data
                _, fds, _, _ = socket.recv_fds(ctl.sock, 1, 1)
                segment = mmap.mmap(fds[0], int(args[0]))
                os.close(fds[0])
                shared = jpype.nio.convertToDirectBuffer(segment)
            elif verb == "poll":
                payload = bytes(bridge.poll())
            elif verb == "open":
                bridge.open(args[0], args[1])
            elif verb == "load_static":
                bridge.loadStatic(args[0], args[1])
            elif verb == "register_stream":
                bridge.registerStream(args[0])
            elif verb == "register_query":
                bridge.registerQuery(args[0], args[1])
            elif verb == "advance_time":
                bridge.advanceTime(jpype.JLong(args[0]))
            elif verb == "stats":
                result = json.loads(str(bridge.stats()))
            elif verb == "close":
                bridge.close()
            else:
                raise ValueError(f"unknown verb {verb!r}")
            reply = {"ok": True, "result": result, "payload": payload is not None}
        except Exception as exc:
            reply = _error(exc, bridge_cls)
            payload = None
        try:
            ctl.send_json(reply)
            if payload is not None:
                ctl.send(payload)
        except (ChannelClosed, OSError):
            return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
