"""Provisioning: manifests, Maven Central dependencies with sha256, user-supplied artifacts,
glue compiled against them, and the messages a user sees when something is missing."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine import Adapter
from rsp_sdk.engine.provision import MissingArtifact, ProvisionCache, load_manifest, sha256_of
from rsp_sdk.errors import InputError, RspError
from tests.conftest import SHARED_DATA
from tests.fixtures.build import MANIFEST, toy_engine_jar
from tests.test_run import rsp_env, run_rsp_env

SLF4J_SHA = "e7c2a48e8515ba1f49fa637d57b4e2f590b3f5bd97407ac699c3aa5efb1204a9"


def manifest_file(tmp: Path, sha: str = SLF4J_SHA, extra: str = "") -> Path:
    p = tmp / "engine.toml"
    p.write_text(
        f"""
[engine]
name = "demo"
upstream = "https://example.org/demo-engine"

[[artifact]]
file = "demo-engine.jar"
match = ["demo-engine*.jar"]
sha256 = ["{"0" * 64}"]
where = "the demo engine's release page"

[[dependency]]
coords = "org.slf4j:slf4j-api:2.0.13"
sha256 = "{sha}"
{extra}
"""
    )
    return p


def test_manifest_errors_name_file_and_field(tmp_path: Path) -> None:
    p = tmp_path / "m.toml"
    p.write_text("[engine\nname = 1")
    with pytest.raises(InputError) as info:
        load_manifest(p)
    assert str(p) in str(info.value) and "invalid TOML" in str(info.value)
    p.write_text('[engine]\nname = "x"\n[[dependency]]\ncoords = "not-coords"\nsha256 = "ab"\n')
    with pytest.raises(InputError) as info:
        load_manifest(p)
    assert "dependency.0.coords" in str(info.value)


def test_missing_artifact_message_says_what_where_and_how(tmp_path: Path) -> None:
    manifest = load_manifest(manifest_file(tmp_path))
    cache = ProvisionCache(tmp_path / "cache")
    with pytest.raises(MissingArtifact) as info:
        cache.classpath(manifest)
    assert "rsp engines fetch demo" in str(info.value)
    (cache.engine_dir("demo") / "deps").mkdir(parents=True)
    shutil.copy(
        Path.home() / ".m2/repository/org/slf4j/slf4j-api/2.0.13/slf4j-api-2.0.13.jar",
        cache.engine_dir("demo") / "deps",
    ) if (
        Path.home() / ".m2/repository/org/slf4j/slf4j-api/2.0.13/slf4j-api-2.0.13.jar"
    ).exists() else (cache.engine_dir("demo") / "deps" / "slf4j-api-2.0.13.jar").write_bytes(b"x")
    with pytest.raises(MissingArtifact) as info:
        cache.classpath(manifest)
    msg = str(info.value)
    assert "demo-engine.jar is missing" in msg
    assert "the demo engine's release page" in msg
    assert "rsp engines add demo /path/to/demo-engine.jar" in msg


def test_fetch_verifies_sha256(tmp_path: Path) -> None:
    if shutil.which("mvn") is None:
        pytest.skip("mvn not installed (apt-get install maven)")
    cache = ProvisionCache(tmp_path / "cache")
    bad = load_manifest(manifest_file(tmp_path, sha="1" * 64))
    with pytest.raises(RspError) as info:
        cache.fetch(bad)
    assert "sha256 mismatch for org.slf4j:slf4j-api:2.0.13" in str(info.value)
    assert not list((cache.engine_dir("demo") / "deps").glob("*.jar"))
    good = load_manifest(manifest_file(tmp_path))
    paths = cache.fetch(good)
    assert [p.name for p in paths] == ["slf4j-api-2.0.13.jar"]
    lock = cache.lock("demo")
    assert lock["dependencies"]["org.slf4j:slf4j-api:2.0.13"]["sha256"] == SLF4J_SHA
    assert cache.missing(good) == [
        "demo-engine.jar (run: rsp engines add demo PATH/demo-engine.jar)"
    ]


def test_add_records_sha256_and_compiles_glue(toy_cache: Any, tmp_path: Path) -> None:
    cache = ProvisionCache(tmp_path / "cache")
    manifest = load_manifest(MANIFEST)
    with pytest.raises(InputError) as info:
        cache.add(manifest, [tmp_path / "nothing.jar"])
    assert "no such file" in str(info.value)
    other = tmp_path / "other.txt"
    other.write_text("x")
    with pytest.raises(InputError) as info:
        cache.add(manifest, [other, other])
    assert "toy-engine.jar (matching toy-engine*.jar)" in str(info.value)
    records = cache.add(manifest, [toy_engine_jar()])
    assert records[0]["verified"] is False and len(str(records[0]["sha256"])) == 64
    cp = cache.classpath(manifest)
    glue = cp[-1]
    assert (glue / "org" / "rspsdk" / "fixture" / "ToyDriver.class").exists()
    assert cache.missing(manifest) == []
    lock = json.loads((cache.engine_dir("toy-java") / "lock.json").read_text())
    assert lock["artifacts"]["toy-engine.jar"]["sha256"] == records[0]["sha256"]


LOG4J = ("log4j:log4j:1.2.17", "1d31696445697720527091754369082a6651bd49781b6005deb94e56753406f9")

GLUE_CHECK = """package org.rspsdk.extra;

import org.apache.log4j.Logger;
import org.rspsdk.fixture.ToyDriver;
import org.rspsdk.glue.EngineLog;

/** Uses a class of each glue folder: the adapter's two and the SDK's log4j. */
public final class GlueCheck {
  public static void main(String[] args) {
    EngineLog log = EngineLog.install("toy");
    Logger.getLogger("engine.window").error("evaluation failed");
    System.out.println(log.errors() + " " + log.last() + " " + ToyDriver.class.getSimpleName());
    try {
      log.check("push");
    } catch (IllegalStateException e) {
      System.out.println(e.getMessage());
    }
  }
}
"""


def test_glue_from_several_folders_and_the_sdk(toy_cache: Any, tmp_path: Path) -> None:
    """``[glue] sources`` as a list plus ``sdk = ["log4j"]``: one javac over all folders, a
    hash over all of them, and the classes work together in a real JVM."""
    import subprocess

    from tests.fixtures.build import FIXTURES

    if shutil.which("mvn") is None:
        pytest.skip("mvn not installed (apt-get install maven): log4j 1.2.17 comes from Maven")
    extra = tmp_path / "extra" / "org" / "rspsdk" / "extra"
    extra.mkdir(parents=True)
    (extra / "GlueCheck.java").write_text(GLUE_CHECK)
    toy_glue = FIXTURES / "java" / "toy-glue"
    m = tmp_path / "multi.toml"
    m.write_text(
        MANIFEST.read_text()
        .replace('name = "toy-java"', 'name = "toy-multi"')
        .replace(
            'sources = "java/toy-glue"',
            f'sources = ["{toy_glue}", "extra"]\nsdk = ["log4j"]\n\n'
            f'[[dependency]]\ncoords = "{LOG4J[0]}"\nsha256 = "{LOG4J[1]}"',
        )
    )
    manifest = load_manifest(m)
    assert manifest.glue is not None and manifest.glue.sdk == ["log4j"]
    assert [p.name for p in manifest.glue_dirs()] == ["toy-glue", "extra", "log4j"]
    cache = ProvisionCache(tmp_path / "cache")
    cache.fetch(manifest)
    cache.add(manifest, [toy_engine_jar()])
    cp = cache.classpath(manifest)
    glue = cp[-1]
    for cls in ("fixture/ToyDriver", "extra/GlueCheck", "glue/EngineLog"):
        assert (glue / "org" / "rspsdk" / f"{cls}.class").exists(), cls
    from rsp_sdk.runtime.bridge import bridge_classpath

    out = subprocess.run(
        [
            "java",
            "-cp",
            ":".join(map(str, [*bridge_classpath(), *cp])),
            "org.rspsdk.extra.GlueCheck",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "1 engine.window: evaluation failed ToyDriver"
    assert out[1].startswith("toy logged 1 error(s) during push")
    # the hash covers every folder: a change in the second one compiles anew
    (extra / "GlueCheck.java").write_text(GLUE_CHECK.replace("evaluation failed", "changed"))
    assert cache.compile_glue(manifest) != glue
    # a string is still one folder; an unknown SDK glue is refused with what exists
    assert load_manifest(MANIFEST).glue_dirs()[0].name == "toy-glue"
    m.write_text(m.read_text().replace('sdk = ["log4j"]', 'sdk = ["log5j"]'))
    with pytest.raises(InputError, match="unknown SDK glue 'log5j'; the SDK ships log4j"):
        load_manifest(m)


def test_engines_cli(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    cache = ProvisionCache(tmp_path / "cache")
    env = {**rsp_env(toy_cache), "RSP_CACHE": str(cache.root)}
    env["RSP_ADAPTERS"] += ",no.such.module:Adapter"
    proc = run_rsp_env(rsp_exe, env, "engines", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["toy-java"]["provisioned"] is False
    assert rows["toy-java"]["runtimes"] == ["docker", "jpype", "py4j"]
    assert rows["toy-py"]["runtimes"] == ["subprocess"] and rows["toy-py"]["provisioned"]
    assert "ModuleNotFoundError" in rows["no.such.module:Adapter"]["error"]
    proc = run_rsp_env(rsp_exe, env, "engines", "add", "toy-java", toy_engine_jar(), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["missing"] == []
    proc = run_rsp_env(rsp_exe, env, "engines", "list")
    assert proc.returncode == 0 and "toy-java" in proc.stdout and "yes" in proc.stdout
    proc = run_rsp_env(rsp_exe, env, "engines", "fetch", "toy-py")
    assert proc.returncode == 2 and "no provisioning manifest" in proc.stderr


# ---- the provisioning path with the lab's real engine artifacts (../shared/engines) ----------

ENGINES = SHARED_DATA.parent / "engines"


@pytest.fixture(scope="module")
def lab() -> Path:
    """../shared/engines: the seed engines' artifacts that no registry serves."""
    if not (ENGINES / "README.md").exists():
        pytest.skip(f"engine artifacts folder {ENGINES} is missing (the lab's artifact store)")
    if shutil.which("javac") is None or shutil.which("mvn") is None:
        pytest.skip("javac and mvn are needed (apt-get install openjdk-17-jdk-headless maven)")
    return ENGINES


def fetched(root: Path, adapter: Adapter) -> ProvisionCache:
    """A fresh cache with the engine's Maven Central jars: copied from the user's cache when
    that has them, then ``fetch`` (which gets and records whatever is missing)."""
    manifest = adapter.manifest()
    assert manifest is not None
    cache = ProvisionCache(root)
    mine = ProvisionCache().engine_dir(manifest.name) / "deps"
    if mine.is_dir():
        shutil.copytree(mine, cache.engine_dir(manifest.name) / "deps")
    cache.fetch(manifest)
    return cache


def test_wrong_jar_is_refused_and_the_working_engine_stays(
    lab: Path, tmp_path: Path, rsp_exe: list[str]
) -> None:
    """C-SPARQL 0.9's jar offered as CQELS' only artifact: the name does not match, so it is
    taken as the one artifact, the glue does not compile, and the cache is put back."""
    from rsp_adapter_cqels import CqelsAdapter

    cache = fetched(tmp_path / "cache", CqelsAdapter())
    manifest = CqelsAdapter().manifest()
    assert manifest is not None
    good = cache.add(manifest, [lab / "cqels" / "cqels.jar"])
    assert good[0]["verified"] is True
    glue = cache.classpath(manifest)[-1]
    env = rsp_env(cache)
    other = lab / "csparql09" / "csparqlengine-0.9.jar"
    proc = run_rsp_env(rsp_exe, env, "engines", "add", "cqels", other)
    assert proc.returncode == 2, proc.stderr
    msg = " ".join(proc.stderr.split())
    assert "csparqlengine-0.9.jar: not a build of cqels 1.0 the adapter can drive" in msg
    assert "CqelsDriver.java:" in msg and "the cache is unchanged" in msg
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 6
    kept = cache.engine_dir("cqels") / "artifacts"
    assert [p.name for p in kept.iterdir()] == ["cqels.jar"]
    assert sha256_of(kept / "cqels.jar") == good[0]["sha256"]
    assert cache.lock("cqels")["artifacts"]["cqels.jar"]["sha256"] == good[0]["sha256"]
    assert cache.missing(manifest) == [] and cache.classpath(manifest)[-1] == glue


def test_jar_of_another_version_is_refused(lab: Path, tmp_path: Path, rsp_exe: list[str]) -> None:
    """0.9.7's core jar for C-SPARQL 0.9 and 0.9's jar for 0.9.7: refused, nothing stored."""
    from rsp_adapter_csparql import Csparql09Adapter, CsparqlAdapter

    cache = fetched(tmp_path / "cache", Csparql09Adapter())
    env = rsp_env(cache)
    core = lab / "csparql" / "csparql-core-0.9.7.jar"
    proc = run_rsp_env(rsp_exe, env, "engines", "add", "csparql09", core)
    assert proc.returncode == 2, proc.stderr
    msg = " ".join(proc.stderr.split())
    assert f"{core}: not a build of csparql09 0.9 the adapter can drive" in msg
    # javac's first error, by file and line (a glue file the 0.9.7 core jar cannot satisfy)
    assert re.search(r"\((Csparql09Driver|CsparqlResults)\.java:\d+: error: ", msg), msg
    assert "CityBench/Benchmark (8884af6d)" in msg
    assert not list((cache.engine_dir("csparql09") / "artifacts").iterdir())
    assert cache.lock("csparql09")["artifacts"] == {}
    old = lab / "csparql09" / "csparqlengine-0.9.jar"
    manifest = CsparqlAdapter().manifest()
    assert manifest is not None
    with pytest.raises(InputError) as info:
        cache.add(manifest, [old])
    msg = str(info.value)
    assert msg.startswith(f"{old}: engine csparql has no artifact matching 'csparqlengine-0.9.jar'")
    assert "csparql-core-0.9.7.jar (matching csparql-core-0.9.7*.jar)" in msg
    assert not cache.engine_dir("csparql").exists()


def test_missing_file_or_wrong_kind_adds_nothing(lab: Path, tmp_path: Path) -> None:
    """A missing file among real ones, a jar for ETALIS' folder, a folder for a jar: one
    message each (the CLI prints it and exits 2), and none of the other files is copied."""
    from rsp_adapter_cqels import CqelsAdapter
    from rsp_adapter_etalis import EtalisAdapter
    from rsp_adapter_sparqlstream import SparqlStreamAdapter

    cache = ProvisionCache(tmp_path / "cache")
    s = lab / "sparqlstream"
    gone = s / "adapter-esper-1.0.13.jar"
    etalis, jar = lab / "jtalis" / "etalis", lab / "cqels" / "cqels.jar"
    cases = [
        (SparqlStreamAdapter(), [s / "morph-core-1.0.7.jar", gone], f"{gone}: no such file"),
        (EtalisAdapter(), [jar], f"{jar}: engine etalis: etalis is a folder, this is a file"),
        (
            CqelsAdapter(),
            [etalis],
            f"{etalis}: engine cqels: cqels.jar is a file, this is a folder",
        ),
    ]
    for adapter, paths, message in cases:
        manifest = adapter.manifest()
        assert manifest is not None
        with pytest.raises(InputError) as info:
            cache.add(manifest, paths)
        assert str(info.value).startswith(message)
    assert not (cache.root / "engines").exists()


def test_engine_tests_skip_naming_the_exact_missing_prerequisite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every engine test's skip comes from one helper over ``adapter.missing_artifacts()``."""
    from tests.real_engines import engine_missing

    monkeypatch.setenv("RSP_CACHE", str(tmp_path / "cache"))  # nothing provisioned
    assert engine_missing("rsprs") == (
        "engine rsprs is not provisioned: missing the cargo-built driver "
        "(run: rsp engines fetch rsprs)"
    )
    jtalis = engine_missing("jtalis") or ""
    assert "jtalis-distribute-1.0.jar (run: rsp engines add jtalis PATH/" in jtalis
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no swipl
    assert engine_missing("rspjs") == (
        "node is not on PATH: engine rspjs needs Node.js 18+ (Debian: apt-get install nodejs npm)"
    )
