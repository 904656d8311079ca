"""rsp-sdk adapter for JTALIS, ETALIS' Java API, on the JVM runtimes: see ``adapter`` and
docs/engines/jtalis.md."""

from rsp_adapter_jtalis.adapter import JtalisAdapter

__all__ = ["JtalisAdapter"]
