"""The Docker daemon: reach it through the docker SDK, or say exactly why not.

Everything here talks to the daemon through ``docker`` (the SDK), never the ``docker`` CLI, so
the CLI need not be installed. No image is ever pulled: no registry is reachable, every image
the project uses is built locally (``rsp images build``).
"""

from __future__ import annotations

import os
from typing import Any

from rsp_sdk.errors import RspError

LABEL = "org.rspsdk"  # prefix of every label we set on images and containers


class DockerUnavailable(RspError):
    """No Docker daemon answers (the message says where we looked and what it said)."""


def _where() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


def docker_client(timeout: float = 120.0) -> Any:
    """A ``docker.DockerClient`` whose daemon answered a ping, else ``DockerUnavailable``."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - a dependency of rsp_sdk
        raise DockerUnavailable(f"the docker SDK is not installed: {exc}") from exc
    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except Exception as exc:
        raise DockerUnavailable(
            f"no Docker daemon is reachable at {_where()} ({type(exc).__name__}: {exc}); start "
            "one, e.g. `dockerd --bridge=none --iptables=false --ip-forward=false &` "
            "(Debian: apt-get install docker.io)"
        ) from None
    return client


def docker_unavailable() -> str | None:
    """Why the Docker runtime cannot work here (``None``: a daemon answers)."""
    try:
        docker_client(timeout=10).close()
    except DockerUnavailable as exc:
        return str(exc)
    return None
