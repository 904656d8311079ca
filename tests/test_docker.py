"""The pinned images and the Docker runtime, for real: the base image against its lock file, the
fixture engine's image (tag = content hash, labels), containers with limits, a non-root user and
a read-only root, and cleanup after a parent's death and Ctrl-C. The conformance kit and the
fault tests run through the docker runtime as well (test_conformance.py, test_faults.py).

Everything that needs Docker skips only when no daemon is reachable, with that reason."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil
import pytest

from rsp_sdk.errors import RspError
from rsp_sdk.images.lock import BaseLock, LockDrift, diff_lock, load_lock, write_lock
from rsp_sdk.runtime.base import ResourceLimits
from tests.engines import SCENARIO

REPO = Path(__file__).resolve().parent.parent
DPKG = "${db:Status-Abbrev}\t${Package}\t${Version}\n"


@pytest.fixture(scope="module")
def client() -> Any:
    from rsp_sdk.images import docker_client, docker_unavailable

    reason = docker_unavailable()
    if reason:
        pytest.skip(reason)
    c = docker_client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def base(client: Any) -> Any:
    """The base image of the repository's lock (built here if absent: root + debootstrap)."""
    from rsp_sdk.images import build_base

    return build_base(client=client)


def _containers(client: Any, **labels: str) -> list[Any]:
    filters = ["org.rspsdk.runtime=docker", *(f"{k}={v}" for k, v in labels.items())]
    return list(client.containers.list(all=True, filters={"label": filters}))


def _gone(client: Any, container_id: str, timeout: float = 15.0) -> bool:
    import docker.errors

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client.api.inspect_container(container_id)
        except docker.errors.NotFound:
            return True
        time.sleep(0.1)
    return False


# ---- the lock file --------------------------------------------------------------------------


def test_lock_names_the_base_image(tmp_path: Path) -> None:
    lock = load_lock()
    assert lock.packages["openjdk-17-jre-headless"].startswith("17.")
    assert {"libc6", "java-common", "ca-certificates-java"} <= set(lock.packages)
    assert lock.tag == f"rsp-base:bookworm-{lock.digest()[:12]}"
    # round trip, and what the digest covers: versions yes, the mirror URL no
    copy = write_lock(lock, tmp_path / "copy.lock")
    assert load_lock(copy).digest() == lock.digest()
    moved = BaseLock(
        base=lock.base.model_copy(update={"mirror": "http://m.example/debian"}),
        packages=lock.packages,
    )
    assert moved.digest() == lock.digest()
    bumped = lock.with_packages({**lock.packages, "libc6": "2.36-9+deb12u99"})
    assert bumped.tag != lock.tag


def test_bad_lock_file_names_the_field(tmp_path: Path) -> None:
    from rsp_sdk.errors import InputError

    bad = tmp_path / "bad.lock"
    bad.write_text('[base]\nsuite = "bookworm"\n[packages]\nlibc6 = 2\n')
    with pytest.raises(InputError) as info:
        load_lock(bad)
    assert "packages.libc6" in str(info.value) and str(bad) in str(info.value)


def test_limits_only_where_enforced() -> None:
    from rsp_sdk.runtime import get_runtime

    with pytest.raises(RspError, match="does not take limits"):
        get_runtime("py4j", limits=ResourceLimits(memory="1g"))
    assert ResourceLimits(memory="512m").memory_bytes() == 512 << 20
    with pytest.raises(ValueError):
        ResourceLimits(memory="2 GB")


# ---- the base image -------------------------------------------------------------------------


def test_base_image_matches_its_lock(client: Any, base: Any) -> None:
    """What dpkg says inside the image is exactly the lock, and so are the labels."""
    lock = load_lock()
    image = client.images.get(base.tag)
    labels = image.labels
    assert labels["org.rspsdk.base.lock-sha256"] == lock.digest()
    assert labels["org.rspsdk.base.packages"] == lock.package_list()
    assert labels["org.rspsdk.base.java"] == lock.packages["openjdk-17-jre-headless"]
    out = client.containers.run(
        base.tag, ["dpkg-query", "-W", f"-f={DPKG}"], network_mode="host", remove=True
    ).decode()
    from rsp_sdk.images.lock import parse_dpkg_query

    installed = parse_dpkg_query(out)
    assert not diff_lock(lock, installed), diff_lock(lock, installed).report()
    # a lock pinning versions the image (the mirror) does not have: reported package by package
    pinned = lock.with_packages(
        {**{k: v for k, v in lock.packages.items() if k != "dash"}, "libc6": "2.36-9+deb12u1"}
    )
    drift = diff_lock(pinned, installed)
    err = str(LockDrift(Path("containers/base/bookworm.lock"), drift))
    assert f"libc6: locked 2.36-9+deb12u1, the mirror now serves {installed['libc6']}" in err
    assert f"dash: new package {installed['dash']}" in err
    assert "rsp images build --update-lock" in err


def test_base_image_runs_java_as_non_root_on_a_read_only_root(client: Any, base: Any) -> None:
    script = "id -u; java -version 2>&1 | head -1; touch /opt/rsp/x 2>/dev/null || echo read-only"
    out = client.containers.run(
        base.tag, ["sh", "-c", script], network_mode="host", read_only=True, remove=True
    ).decode()
    uid, java, ro = out.strip().splitlines()
    assert uid == "10001" and "17.0" in java and ro == "read-only", out


def test_build_is_a_no_op_when_the_lock_is_unchanged(
    client: Any, base: Any, rsp_exe: list[str]
) -> None:
    from tests.conftest import run_rsp

    t0 = time.monotonic()
    proc = run_rsp(rsp_exe, "images", "build", "--base-only", "--json")
    result = json.loads(proc.stdout)
    assert result["base"]["tag"] == base.tag and result["base"]["built"] is False
    assert time.monotonic() - t0 < 30
    listed = json.loads(run_rsp(rsp_exe, "images", "list", "--json").stdout)
    assert any(base.tag in r["tags"] and r["current"] for r in listed)


# ---- engine images --------------------------------------------------------------------------


def test_engine_image_tag_is_a_content_hash(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path
) -> None:
    from rsp_sdk.engine.provision import sha256_of
    from rsp_sdk.images.engine import ensure_engine_image, plan_engine_image
    from tests.fixtures.adapters import ToyJavaAdapter

    spec = ToyJavaAdapter().driver(toy_cache)
    image = ensure_engine_image(spec, client=client)
    assert image.tag.startswith("rsp-engine-toy-java:") and image.tag.endswith(
        image.content_hash[:16]
    )
    labels = client.images.get(image.tag).labels
    assert labels["org.rspsdk.engine.name"] == "toy-java"
    assert labels["org.rspsdk.engine.version"] == "1.0"
    assert labels["org.rspsdk.base"] == base.tag
    assert labels["org.rspsdk.bridge.version"].startswith("0.1.0+")
    cp = json.loads(labels["org.rspsdk.engine.classpath"])
    assert [e["sha256"] for e in cp] == [sha256_of(p) for p in spec.classpath]
    again = ensure_engine_image(spec, client=client)
    assert again.tag == image.tag and not again.built
    # anything else on the classpath is another image
    extra = tmp_path / "extra.jar"
    extra.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    other = plan_engine_image(spec.model_copy(update={"classpath": [*spec.classpath, extra]}))
    assert other.tag != image.tag


def test_missing_base_is_a_clear_error(client: Any, toy_cache: Any, tmp_path: Path) -> None:
    from rsp_sdk.images.engine import ensure_engine_image
    from tests.fixtures.adapters import ToyJavaAdapter

    lock = load_lock()
    other = lock.with_packages({**lock.packages, "dash": "0.0-not-built"})
    with pytest.raises(RspError, match=r"base image rsp-base:bookworm-\w+ is not built"):
        ensure_engine_image(ToyJavaAdapter().driver(toy_cache), client=client, lock=other)


# ---- the runtime ----------------------------------------------------------------------------


LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}


def loopback_listeners(ports: Iterable[int]) -> dict[int, set[str]]:
    """Port → addresses listening on it, for the given ports (those with no listener are absent:
    the caller asserts they were found, so an empty scan cannot pass)."""
    wanted = set(ports)
    found: dict[int, set[str]] = {}
    for c in psutil.net_connections(kind="inet"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port in wanted:
            found.setdefault(c.laddr.port, set()).add(c.laddr.ip)
    return found


def test_container_has_limits_user_and_host_loopback_ports(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path
) -> None:
    from rsp_sdk.runtime.docker import DockerRuntime
    from rsp_sdk.testing import TreeWatch
    from tests.fixtures.adapters import ToyJavaAdapter

    runtime = DockerRuntime(limits=ResourceLimits(memory="512m", cpus=1.0))
    session = ToyJavaAdapter().open(runtime, tmp_path / "engine", cache=toy_cache)
    watch = TreeWatch(session.pid)
    watch.observe()
    channel: Any = session.channel
    info = client.api.inspect_container(channel.container_id)
    host_config = info["HostConfig"]
    assert host_config["Memory"] == 512 << 20 and host_config["NanoCpus"] == 10**9
    assert host_config["ReadonlyRootfs"] is True and host_config["NetworkMode"] == "host"
    assert info["Config"]["User"] == "10001:10001"
    mounts = {m["Destination"]: m for m in info["Mounts"]}
    assert mounts[str((tmp_path / "engine").resolve())]["RW"] is True
    # the sampler's pid is the container's init process: the bridge JVM, seen from the host
    assert session.pid == info["State"]["Pid"]
    assert "org.rspsdk.bridge.BridgeServer" in psutil.Process(session.pid).cmdline()
    # the JVM sizes its heap from the container's limit
    assert session.stats()["heap_max"] <= 512 << 20
    assert set(watch.ports) == set(channel.ports)
    listening = loopback_listeners(channel.ports)
    # every port of the channel has a listening socket (host networking), and each is loopback
    assert channel.ports and set(listening) == set(channel.ports), (listening, channel.ports)
    wide = {port: ips - LOOPBACK for port, ips in listening.items() if ips - LOOPBACK}
    assert not wide, f"ports listening beyond loopback: {wide}"
    assert channel.start_seconds < 30
    session.register_stream(SCENARIO.stream)
    session.register_query(SCENARIO.spec())
    session.close()
    assert _gone(client, channel.container_id)
    watch.assert_clean()


def test_engine_that_writes_outside_its_work_dir_gets_a_writable_root(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path
) -> None:
    from rsp_sdk.runtime.docker import DockerRuntime
    from tests.fixtures.adapters import ToyJavaAdapter

    spec = ToyJavaAdapter().driver(toy_cache)
    assert spec.read_only_root  # the manifest's default
    writable = spec.model_copy(update={"read_only_root": False})
    channel = DockerRuntime().launch(writable, tmp_path / "w", log_dir=tmp_path / "logs")
    try:
        info = client.api.inspect_container(channel.container_id)
        assert info["HostConfig"]["ReadonlyRootfs"] is False
    finally:
        channel.close()
    assert _gone(client, channel.container_id)


def test_static_data_outside_the_work_dir_is_visible(toy_cache: Any, tmp_path: Path) -> None:
    from rsp_sdk.runtime.docker import DockerChannel

    channel = DockerChannel.__new__(DockerChannel)
    channel.workdir = (tmp_path / "w").resolve()
    outside = tmp_path / "static.nt"
    outside.write_text("<http://a> <http://b> <http://c> .\n")
    inside = Path(channel._inside(outside))
    assert inside.is_relative_to(channel.workdir) and inside.read_text() == outside.read_text()
    already = channel.workdir / "s.nt"
    already.parent.mkdir(parents=True, exist_ok=True)
    already.write_text("x")
    assert channel._inside(already) == str(already)


def test_unknown_driver_class_leaves_no_container(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path
) -> None:
    from rsp_sdk.runtime.base import EngineError
    from rsp_sdk.runtime.docker import DockerRuntime
    from tests.fixtures.adapters import ToyJavaAdapter

    spec = ToyJavaAdapter().driver(toy_cache).model_copy(update={"driver_class": "org.x.Nope"})
    # this process's containers only: a matrix running beside the tests starts its own
    mine = {"org.rspsdk.owner-pid": str(os.getpid())}
    before = {c.id for c in _containers(client, **mine)}
    with pytest.raises(EngineError) as info:
        DockerRuntime().launch(spec, tmp_path / "w", log_dir=tmp_path / "logs")
    assert "org.x.Nope" in str(info.value) and "ClassNotFoundException" in str(info.value)
    assert "died" in str(info.value)
    time.sleep(0.2)
    assert {c.id for c in _containers(client, **mine)} <= before


CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from rsp_sdk.engine.provision import ProvisionCache
    from tests.engines import open_toy
    session, _ = open_toy("toy-java", "docker", __import__("pathlib").Path({work!r}),
                          ProvisionCache({cache!r}))
    print(session.channel.container_id, flush=True)
    time.sleep(600)
    """
)


def test_parent_killed_container_removed(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path
) -> None:
    """SIGKILL the owner: the attached stdin closes, the bridge exits, auto-remove follows."""
    code = CHILD.format(repo=str(REPO), work=str(tmp_path / "engine"), cache=str(toy_cache.root))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        cid = parent.stdout.readline().strip()
        assert len(cid) == 64, f"child failed: {cid!r}"
        assert client.api.inspect_container(cid)["State"]["Running"]
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _gone(client, cid), f"container {cid[:12]} outlived its killed owner"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_rsp_run_on_docker_ctrl_c_removes_the_container(
    client: Any, base: Any, toy_cache: Any, tmp_path: Path, rsp_exe: list[str]
) -> None:
    """`rsp run -r docker` interrupted with Ctrl-C: exit 130, status interrupted, no container."""
    from rsp_sdk.testing import Scenario
    from tests.test_run import prepare_inputs, rsp_env

    stream, query = prepare_inputs(tmp_path, Scenario(triples=40_000, span_ms=20_000))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            *rsp_exe,
            "run",
            "-e",
            "toy-java",
            "-r",
            "docker",
            "-q",
            str(query),
            "-s",
            str(stream),
            "-o",
            str(out),
            "--memory",
            "1g",
            "--json",
        ],
        env=rsp_env(toy_cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal: a shell starting pytest in the background (no job control)
        # leaves SIGINT ignored, and an ignored SIGINT is inherited, so rsp run never saw it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            parts = list((out / "pushed.parquet").glob("part-*")) if out.exists() else []
            if parts:
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.2)
        else:
            pytest.fail("rsp run never pushed a batch")
        owned = _containers(client, **{"org.rspsdk.owner-pid": str(proc.pid)})
        assert len(owned) == 1
        assert owned[0].attrs["HostConfig"]["Memory"] == 1 << 30
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    status = json.loads((out / "status.json").read_text())
    assert status["state"] == "interrupted" and status["runtime"] == "docker"
    assert _gone(client, owned[0].id, timeout=5)
    config = json.loads((out / "config.json").read_text())
    assert config["request"]["limits"] == {"memory": "1g", "cpus": None}
