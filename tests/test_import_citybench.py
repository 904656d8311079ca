"""CityBench ``.stream`` import against triples written by hand from CityBench's Java code.

The expected triples below were derived by reading ``CSPARQLAarhus*Stream.getStatements`` and
``CSPARQLLocationStream`` (CityBench+Benchmark, src/org/insight_centre/aceis/io/streams/csparql)
and the service declarations of ``SensorRepository.n3``; nothing here calls the importer's
helpers. Observation IRIs are this SDK's deterministic ones (CityBench appends a random UUID).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.streams.importers.citybench import java_double, read_citybench
from rsp_sdk.streams.io import read_meta
from tests.conftest import run_rsp

SES = "http://www.insight-centre.org/dataset/SampleEventService#"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
OBS = "<http://purl.oclc.org/NET/ssnx/ssn#Observation>"
BY = "<http://purl.oclc.org/NET/ssnx/ssn#observedBy>"
PROP = "<http://purl.oclc.org/NET/ssnx/ssn#observedProperty>"
VAL = "<http://purl.oclc.org/NET/sao/hasValue>"
DBL = "^^<http://www.w3.org/2001/XMLSchema#double>"
LONG = "^^<http://www.w3.org/2001/XMLSchema#long>"
AUG1 = 1406851200000  # 2014-08-01T00:00:00Z

Triple = tuple[str, int, str, str, str]


def _dataset(shared_data: Path) -> Path:
    return shared_data / "CityBench+Benchmark" / "dataset"


def _copy_head(shared_data: Path, folder: Path, name: str, lines: int) -> Path:
    """The first ``lines`` lines of a shipped .stream file (header included)."""
    src = shared_data / "CityBench+Benchmark" / "streams" / f"{name}.stream"
    folder.mkdir(parents=True, exist_ok=True)
    with src.open() as f:
        head = [next(f) for _ in range(lines)]
    out = folder / src.name
    out.write_text("".join(head))
    return out


def _observation(stream: str, t: int, obs: str, prop: str, value: str | None) -> list[Triple]:
    out = [
        (SES + stream, t, obs, TYPE, OBS),
        (SES + stream, t, obs, BY, f"<{SES}{stream}>"),
        (SES + stream, t, obs, PROP, f"<{SES}{prop}>"),
    ]
    if value is not None:
        out.append((SES + stream, t, obs, VAL, value))
    return out


def _triples(table: pa.Table) -> Counter[Triple]:
    cols = [table.column(c).to_pylist() for c in ("stream", "t_app_ms", "s", "p", "o")]
    return Counter(zip(*cols, strict=True))


def _import_one(shared_data: Path, tmp_path: Path, name: str, lines: int = 2) -> pa.Table:
    path = _copy_head(shared_data, tmp_path / "streams", name, lines)
    table, _ = read_citybench([path], dataset=_dataset(shared_data))
    return table


def test_traffic_row(shared_data: Path, tmp_path: Path) -> None:
    # OK,34,54,887,34,2014-08-01T08:00:00,11,20746942,182955 ; trafficMetaData: distance 511 m
    table = _import_one(shared_data, tmp_path, "AarhusTrafficData182955")
    stream, t = "AarhusTrafficData182955", AUG1 + 8 * 3600_000
    ob = f"<{SES}AarhusTrafficObservation-20746942-AarhusTrafficData182955-L2-Property-"
    expected = [
        *_observation(stream, t, ob + "a6cd03be-ae1f-47d0-b24f-83f82ef93c4d>",
                      "Property-a6cd03be-ae1f-47d0-b24f-83f82ef93c4d", f'"54.0"{DBL}'),  # AvgSpeed
        *_observation(stream, t, ob + "c9f858eb-4a62-404d-be7c-0626219ec324>",
                      "Property-c9f858eb-4a62-404d-be7c-0626219ec324", f'"11.0"{DBL}'),  # count
        # EstimatedTime = distance / avgSpeed = 511 / 54
        *_observation(stream, t, ob + "78652e9a-9ef7-49c6-858d-e3f0eb4f142d>",
                      "Property-78652e9a-9ef7-49c6-858d-e3f0eb4f142d",
                      f'"9.462962962962964"{DBL}'),
        # CongestionLevel = vehicleCount / distance = 11 / 511
        *_observation(stream, t, ob + "11d60592-7d15-4934-9e23-f1b38df90fd5>",
                      "Property-11d60592-7d15-4934-9e23-f1b38df90fd5",
                      f'"0.021526418786692758"{DBL}'),
        # ct:MeasureTime: the Java tests "MeasuredTime", so this observation has no value
        *_observation(stream, t, ob + "8421b8b3-72c0-4517-87af-f1cc22d29895>",
                      "Property-8421b8b3-72c0-4517-87af-f1cc22d29895", None),
    ]  # fmt: skip
    assert _triples(table) == Counter(expected)


def test_pollution_row(shared_data: Path, tmp_path: Path) -> None:
    # 28,91,61,99,99,…,2014-08-01 00:05:00 ; api = max of the five ints = 99 (int → xsd:long)
    table = _import_one(shared_data, tmp_path, "AarhusPollutionData182955")
    prop = "Property-c779fccb-2989-4e3e-ac14-d88b2a35c7d2"
    ob = f"<{SES}AarhusPollutionObservation-0-AarhusPollutionData182955-L2-{prop}>"
    expected = _observation("AarhusPollutionData182955", AUG1 + 300_000, ob, prop, f'"99"{LONG}')
    assert _triples(table) == Counter(expected)


def test_parking_row(shared_data: Path, tmp_path: Path) -> None:
    # 0,2014-05-22 09:09:04.145,2,512,SKOLEBAKKEN,… ; vacancies = 512 - 0; ".145" ignored
    table = _import_one(shared_data, tmp_path, "AarhusParkingDataSKOLEBAKKEN")
    ob = f"<{SES}AarhusParkingObservation-2-AarhusParkingDataSKOLEBAKKEN-L2-parkingproperty-4>"
    expected = _observation(
        "AarhusParkingDataSKOLEBAKKEN", 1400749744000, ob, "parkingproperty-4", f'"512"{LONG}'
    )
    assert _triples(table) == Counter(expected)


def test_weather_row(shared_data: Path, tmp_path: Path) -> None:
    # 56,18,7.4,2014-08-01T00:00:00 ; hum int, tempm and wspdm double
    table = _import_one(shared_data, tmp_path, "AarhusWeatherData0")
    stream = "AarhusWeatherData0"
    wind = "Property-5cb2e2d7-8773-4e66-9690-6cfb3591c17b"
    temp = "Property-66462839-6a65-4d5a-acc6-ffb627d8dc14"
    hum = "Property-7e96ab11-820a-42b9-aab2-b6c4ebf88de2"
    ob = f"<{SES}AarhusWeatherObservation-0-AarhusWeatherData0-L2-"
    expected = [
        *_observation(stream, AUG1, f"{ob}{wind}>", wind, f'"7.4"{DBL}'),
        *_observation(stream, AUG1, f"{ob}{temp}>", temp, f'"18.0"{DBL}'),
        *_observation(stream, AUG1, f"{ob}{hum}>", hum, f'"56"{LONG}'),
    ]
    assert _triples(table) == Counter(expected)


def test_location_row(shared_data: Path, tmp_path: Path) -> None:
    # user-007|56.56860661596417,10.020502035841758 ; no time column: line 1 at the origin (0)
    table = _import_one(shared_data, tmp_path, "UserLocationService", lines=1)
    s = SES + "UserLocationService"
    ob = f"<{SES}UserLocationObservation-0-UserLocationService-L1-locationProperty>"
    ct = "http://www.insight-centre.org/citytraffic#"
    expected = [
        (s, 0, ob, TYPE, OBS),
        (s, 0, "_:loc1", f"<{ct}hasLatitude>", f'"56.56860661596417"{DBL}'),
        (s, 0, "_:loc1", f"<{ct}hasLongitude>", f'"10.020502035841758"{DBL}'),
        (s, 0, ob, PROP, f"<{SES}locationProperty>"),
        (s, 0, ob, BY, f"<{s}>"),
        (
            s,
            0,
            ob,
            "<http://purl.oclc.org/NET/ssnx/ssn#featureOfInterest>",
            "<http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
            "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7>",
        ),
        (s, 0, ob, VAL, "_:loc1"),
    ]
    assert _triples(table) == Counter(expected)


@pytest.mark.parametrize(
    ("value", "java"),
    [(54.0, "54.0"), (0.0005, "5.0E-4"), (1e7, "1.0E7"), (-1.0, "-1.0"), (0.001, "0.001")],
)
def test_java_double_lexical_form(value: float, java: str) -> None:
    """Witness: the values Java 8's ``Double.toString`` prints (JLS §Double.toString)."""
    assert java_double(value) == java


def test_cli_multi_file_import_and_provenance(
    shared_data: Path, tmp_path: Path, rsp_exe: list[str]
) -> None:
    folder = tmp_path / "streams"
    traffic = _copy_head(shared_data, folder, "AarhusTrafficData158505", 4)
    weather = _copy_head(shared_data, folder, "AarhusWeatherData0", 3)
    _copy_head(shared_data, folder, "UserLocationService", 2)
    out = tmp_path / "cb.parquet"
    proc = run_rsp(
        rsp_exe, "stream", "import", folder, "-f", "citybench",
        "--dataset", _dataset(shared_data), "-o", out, "--json",
    )  # fmt: skip
    # traffic: 3 rows × 5 payloads, 4 of them valued; weather 2 rows × 3 × 4; location 2 × 7
    assert json.loads(proc.stdout)["rows"] == 3 * (5 * 3 + 4) + 2 * 12 + 2 * 7
    meta = read_meta(out)
    assert meta is not None
    assert meta.producer == "import:citybench"
    assert meta.parameters["source"] == [str(p) for p in sorted(folder.glob("*.stream"))]
    assert meta.parameters["timezone"] == "UTC"
    assert len(meta.streams) == 3
    # the location stream starts when the later of traffic (07:50) and weather (00:00) starts
    assert meta.parameters["location_origin_ms"] == AUG1 + (7 * 60 + 50) * 60_000
    # two files named one by one give the same triples as the folder holding just them
    out2 = tmp_path / "two.parquet"
    run_rsp(
        rsp_exe, "stream", "import", traffic, weather, "-f", "citybench",
        "--dataset", _dataset(shared_data), "-o", out2,
    )  # fmt: skip
    meta2 = read_meta(out2)
    assert meta2 is not None and len(meta2.streams) == 2


def test_bad_line_exit_2_names_file_and_line(
    shared_data: Path, tmp_path: Path, rsp_exe: list[str]
) -> None:
    path = _copy_head(shared_data, tmp_path / "streams", "AarhusPollutionData158505", 3)
    lines = path.read_text().splitlines(keepends=True)
    lines.append(lines[2].replace("77,", "seventy-seven,", 1))
    path.write_text("".join(lines))
    out = tmp_path / "bad.parquet"
    proc = run_rsp(
        rsp_exe, "stream", "import", path, "-f", "citybench",
        "--dataset", _dataset(shared_data), "-o", out, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert f"{path}:4" in proc.stderr + proc.stdout
    assert "an integer" in proc.stderr + proc.stdout
    assert not out.exists()


def test_missing_reading_is_skipped_and_recorded(shared_data: Path, tmp_path: Path) -> None:
    """AarhusWeatherData0 line 1871 is ``,,,2014-08-27T05:00:00``: no observation, recorded."""
    src = shared_data / "CityBench+Benchmark" / "streams" / "AarhusWeatherData0.stream"
    folder = tmp_path / "streams"
    folder.mkdir()
    shutil.copy(src, folder / src.name)
    table, params = read_citybench([folder], dataset=_dataset(shared_data))
    skipped = params["skipped_lines"]
    assert isinstance(skipped, dict)
    assert skipped["AarhusWeatherData0.stream"][0] == 1871
    assert len(skipped["AarhusWeatherData0.stream"]) == 22
    rows = 4357 - 22  # data rows of the file minus the skipped ones
    assert table.num_rows == rows * 3 * 4


@pytest.mark.parametrize(
    ("name", "old", "new", "expected"),
    [
        ("AarhusTrafficData158505", "2014-08-01T07:55:00", "2014-08-01 07:55:00", "a time"),
        ("AarhusWeatherData0", "7.4,", "7.4x,", "a number"),
    ],
)
def test_bad_values_name_file_line_and_expected(
    shared_data: Path, tmp_path: Path, name: str, old: str, new: str, expected: str
) -> None:
    path = _copy_head(shared_data, tmp_path / "streams", name, 3)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(old, new, 1)
    assert lines[2] != path.read_text().splitlines(keepends=True)[2]
    path.write_text("".join(lines))
    with pytest.raises(InputError) as err:
        read_citybench([path], dataset=_dataset(shared_data))
    assert err.value.path == path
    assert err.value.line == 3
    assert expected in str(err.value)


def test_unknown_file_name_is_an_input_error(shared_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "SomethingElse.stream"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="AarhusTrafficData"):
        read_citybench([path], dataset=_dataset(shared_data))
