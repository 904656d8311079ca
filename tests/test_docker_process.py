"""The docker runtime carrying programs (``ProcessDriver.image``): rsp-js in its pinned image.

The conformance kit runs on ``rspjs@docker`` and ``etalis@docker`` (test_rspjs.py,
test_etalis.py: both adapters declare an image, so the kit picks the runtime up). Here: what
the kit does not look at — the container's isolation (user, read-only root, tmpfs, host
network, the sampler's pid is node's), its removal when the *caller* is SIGKILLed, the planning
rules for programs without an image, and the ETALIS shim's stdlib copy of the literal syntax.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from rsp_sdk.errors import RspError
from rsp_sdk.runtime import adapter_runtimes, runtimes_for
from rsp_sdk.runtime.base import EngineError, ImageFile, ProcessDriver, ProcessImage

REPO = Path(__file__).resolve().parent.parent


def _rspjs_on_docker() -> Any:
    """Docker client, or skip naming what is missing (daemon, rsp-js, base image)."""
    from rsp_sdk.images import docker_client, docker_unavailable
    from rsp_sdk.images.base import base_image
    from tests.real_engines import engine_missing

    reason = docker_unavailable() or engine_missing("rspjs")
    if reason:
        pytest.skip(reason)
    client = docker_client()
    if base_image(client) is None:
        client.close()
        pytest.skip(
            "the base image of containers/base/bookworm.lock is not built: rsp images build"
        )
    return client


def _gone(client: Any, container_id: str, timeout: float = 20.0) -> bool:
    import docker.errors

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client.api.inspect_container(container_id)
        except docker.errors.NotFound:
            return True
        time.sleep(0.1)
    return False


CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from rsp_adapter_rspjs import RspJsAdapter
    from rsp_sdk.runtime.docker import DockerRuntime
    session = RspJsAdapter().open(DockerRuntime(), Path({work!r}))
    session.register_stream("http://example.org/s")
    print(session.channel.container_id, session.pid, flush=True)
    time.sleep(600)
    """
)


def test_rspjs_container_is_isolated_and_dies_with_its_killed_caller(tmp_path: Path) -> None:
    """A caller SIGKILLed mid-run: the attached socket closes, node reads EOF and exits, the
    container (created with auto-remove) is gone; while it ran it was non-root, read-only,
    host-networked, with a tmpfs /tmp, and the sampler's pid was node's."""
    client = _rspjs_on_docker()
    code = CHILD.format(repo=str(REPO), work=str(tmp_path / "engine"))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        first = parent.stdout.readline().split()
        assert len(first) == 2 and len(first[0]) == 64, f"child failed: {first!r}"
        cid, pid = first[0], int(first[1])
        info = client.api.inspect_container(cid)
        host = info["HostConfig"]
        assert info["State"]["Running"] and info["Config"]["User"] == "10001:10001"
        assert host["ReadonlyRootfs"] is True and host["NetworkMode"] == "host"
        assert "/tmp" in host["Tmpfs"]
        assert info["Config"]["Image"].startswith("rsp-engine-rspjs:")
        assert pid == info["State"]["Pid"] and psutil.Process(pid).name() == "node"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _gone(client, cid), f"container {cid[:12]} outlived its killed caller"
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    finally:
        if parent.poll() is None:
            parent.kill()
        client.close()


def test_programs_without_an_image_are_not_planned_on_docker() -> None:
    from rsp_adapter_rspjs import RspJsAdapter

    from tests.fixtures.adapters import ToyPyAdapter

    assert "docker" in runtimes_for("process")
    assert adapter_runtimes(ToyPyAdapter()) == ["subprocess"]
    assert adapter_runtimes(RspJsAdapter()) == ["docker", "subprocess"]


def test_imageless_program_on_docker_is_a_clear_start_error(tmp_path: Path) -> None:
    from rsp_sdk.runtime.docker import DockerRuntime

    spec = ProcessDriver(argv=["true"])
    with pytest.raises(EngineError, match="declares no image"):
        DockerRuntime().launch(spec, tmp_path / "w", log_dir=tmp_path / "logs")


def test_a_package_the_lock_has_not_pinned_is_named(tmp_path: Path) -> None:
    from rsp_sdk.images.engine import plan_process_image

    (tmp_path / "x.js").write_text("//\n")
    image = ProcessImage(
        engine="x",
        packages=["nodejs", "ruby3.1"],
        files=[ImageFile(name="x.js", host=tmp_path / "x.js")],
        argv=["ruby", "/opt/rsp/files/x.js"],
    )
    with pytest.raises(RspError, match=r"ruby3\.1.*include = \[\.\.\.\].*--update-lock"):
        plan_process_image(ProcessDriver(argv=["x"], image=image))
    ok = plan_process_image(
        ProcessDriver(argv=["x"], image=image.model_copy(update={"packages": ["nodejs"]}))
    )
    assert ok.tag.startswith("rsp-engine-x:") and ok.labels["org.rspsdk.engine.packages"]


def test_etalis_shim_reads_literals_as_the_sdk_does() -> None:
    """The shim carries a stdlib copy of the N-Triples literal syntax (it runs on Debian's
    python3 in the ETALIS image): it must agree with rsp_sdk.model.terms."""
    from rsp_adapter_etalis import shim

    from rsp_sdk.model import terms

    assert shim.XSD_INTEGER_TYPES == terms.XSD_INTEGER_TYPES
    assert shim.XSD_NUMERIC_TYPES == terms.XSD_NUMERIC_TYPES
    for literal in (
        '"plain"',
        '"a \\"quoted\\"\\n\\u00e9\\U0001F600 \\\\ text"',
        '"chat"@fr-BE',
        '"42"^^<http://www.w3.org/2001/XMLSchema#integer>',
        '""',
    ):
        assert shim.split_literal(literal) == terms.split_literal(literal), literal
    for bad in ("<http://x>", '"open', '"x"^^<y'):
        with pytest.raises(ValueError):
            shim.split_literal(bad)
