"""Pinned, locally built Docker images: the Debian/JRE base and one image per JVM engine.

``build_base`` assembles the base from the lock file (``containers/base/bookworm.lock``);
``ensure_engine_image`` puts an engine's provisioned classpath and the bridge on top of it. The
Docker runtime (``rsp_sdk.runtime.docker``) finds or builds the image of a driver the same way.
"""

from __future__ import annotations

from rsp_sdk.images.base import BaseImage, base_image, build_base
from rsp_sdk.images.client import DockerUnavailable, docker_client, docker_unavailable
from rsp_sdk.images.lock import BaseLock, LockDiff, LockDrift, diff_lock, load_lock, write_lock

__all__ = [
    "BaseImage",
    "BaseLock",
    "DockerUnavailable",
    "LockDiff",
    "LockDrift",
    "base_image",
    "build_base",
    "diff_lock",
    "docker_client",
    "docker_unavailable",
    "load_lock",
    "write_lock",
]
