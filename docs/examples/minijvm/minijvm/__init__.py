"""minijvm: the adapter tutorial's JVM engine, as an rsp-sdk adapter package."""

from minijvm.adapter import MiniJvmAdapter

__all__ = ["MiniJvmAdapter"]
