"""minirsp: an example engine (``engine.py``, a JSON-lines program) and its rsp-sdk adapter."""

from minirsp.adapter import MiniRspAdapter

__all__ = ["MiniRspAdapter"]
