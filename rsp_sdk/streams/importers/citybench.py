"""CityBench sensor CSV ``.stream`` files, annotated as CityBench's C-SPARQL stream classes do.

CityBench (Ali et al., ISWC 2015) replays Aarhus sensor CSVs and turns every row into SSN
observations in ``CSPARQLAarhus{Traffic,Pollution,Parking,Weather}Stream`` and
``CSPARQLLocationStream``. The service of a file is ``SampleEventService#<file stem>`` (also its
stream IRI); its payloads come from ``SensorRepository.n3``: every ``?x`` with ``<service>
ssn:observes ?x . ?x a ?type ; ssn:isPropertyOf ?foi``. Per row and payload CityBench emits::

    <obs> a ssn:Observation ; ssn:observedBy <service> ; ssn:observedProperty ?x ;
          sao:hasValue VALUE .

VALUE is chosen by substring tests on ``type|foi|x`` and typed as Jena's ``addLiteral`` types
the Java value: ``double`` → ``xsd:double`` (Java ``Double.toString`` lexical form), ``int`` →
``xsd:long``. Differences from CityBench, on purpose (docs/citybench.md):

* observation IRIs are deterministic (``<obId>-<file stem>-L<line>-<property local name>``)
  instead of ``<obId>`` + ``UUID.randomUUID()``;
* application time is the row's CSV time column read as UTC (CityBench stamps quads with the
  wall clock while replaying); ``UserLocationService`` has no time column, so line *i* gets
  ``origin + i × interval`` (CityBench's 1000 ms sleep);
* every row is imported: CityBench's traffic stream drops the first row and stops after 999.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TextIO, TypeVar

import pyarrow as pa
import pyoxigraph as ox

from rsp_sdk.errors import InputError
from rsp_sdk.streams.io import sort_by_time, stream_table

SES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD = "http://www.w3.org/2001/XMLSchema#"
T = TypeVar("T")
LOCATION_FOI = (
    "http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
    "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7"
)

OBSERVATION = f"<{SSN}Observation>"
OBSERVED_BY = f"<{SSN}observedBy>"
OBSERVED_PROPERTY = f"<{SSN}observedProperty>"
HAS_VALUE = f"<{SAO}hasValue>"


class Kind(StrEnum):
    TRAFFIC = "AarhusTrafficData"
    POLLUTION = "AarhusPollutionData"
    PARKING = "AarhusParkingData"
    WEATHER = "AarhusWeatherData"
    LOCATION = "UserLocationService"


# time column and its layout (SimpleDateFormat patterns of the Java classes)
TIME_COLUMN = {
    Kind.TRAFFIC: ("TIMESTAMP", "%Y-%m-%dT%H:%M:%S"),
    Kind.POLLUTION: ("timestamp", "%Y-%m-%d %H:%M:%S"),
    Kind.PARKING: ("updatetime", "%Y-%m-%d %H:%M:%S"),
    Kind.WEATHER: ("TIMESTAMP", "%Y-%m-%dT%H:%M:%S"),
}


@dataclass(frozen=True)
class Payload:
    """One ``ssn:observes`` entry of a service: CityBench's ``type|foi|property`` string."""

    iri: str
    type: str
    foi: str

    @property
    def text(self) -> str:
        return f"{self.type}|{self.foi}|{self.iri}"


def kind_of(path: Path) -> Kind:
    for kind in Kind:
        if path.stem.startswith(kind.value):
            return kind
    raise InputError(
        f"cannot tell the CityBench stream kind of {path.name!r}",
        path=path,
        expected="a file named " + ", ".join(f"{k.value}*.stream" for k in Kind),
    )


def java_double(x: float) -> str:
    """Java's ``Double.toString`` (Jena's lexical form of an ``xsd:double`` from a double)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    a = abs(x)
    sign = "-" if x < 0 else ""
    if 1e-3 <= a < 1e7:
        return sign + repr(a)  # Python's repr is plain decimal with ".0" in this range
    t = Decimal(repr(a)).as_tuple()
    digits = "".join(map(str, t.digits)).rstrip("0") or "0"
    exponent = int(t.exponent) + len(t.digits) - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def double_literal(x: float) -> str:
    return f'"{java_double(x)}"^^<{XSD}double>'


def long_literal(x: int) -> str:
    return f'"{x}"^^<{XSD}long>'


def read_payloads(repository: Path) -> dict[str, list[Payload]]:
    """Service IRI → payloads, by CityBench's query (``RDFFileManager.extractEventPayloads``)."""
    store = ox.Store()
    try:
        store.bulk_load(path=str(repository), format=ox.RdfFormat.N3)
    except (SyntaxError, OSError) as e:
        raise InputError(f"cannot read the sensor repository: {e}", path=repository) from e
    query = f"""PREFIX ssn: <{SSN}>
        SELECT ?s ?x ?y ?z WHERE {{ ?s ssn:observes ?x . ?x a ?y . ?x ssn:isPropertyOf ?z }}"""
    out: dict[str, list[Payload]] = {}
    for row in store.query(query):  # type: ignore[union-attr]
        ptype = row["y"].value
        if ptype == "http://www.w3.org/2000/01/rdf-schema#Resource":
            continue
        out.setdefault(row["s"].value, []).append(Payload(row["x"].value, ptype, row["z"].value))
    for payloads in out.values():
        payloads.sort(key=lambda p: p.iri)
    return out


def read_distances(metadata: Path) -> dict[str, int]:
    """REPORT_ID → DISTANCE_IN_METERS from ``trafficMetaData.csv`` (CityBench's traffic stream)."""
    with _open(metadata) as f:
        rows = csv.DictReader(f)
        return {r["REPORT_ID"]: int(r["DISTANCE_IN_METERS"]) for r in rows}


def _open(path: Path) -> TextIO:
    try:
        return path.open(newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=path) from e


@dataclass
class Row:
    """One CSV row being annotated: where it came from, for IRIs and error messages."""

    path: Path
    line: int
    fields: dict[str, str]
    stem: str = ""

    def __post_init__(self) -> None:
        self.stem = self.stem or self.path.stem

    def get(self, name: str, parse: Callable[[str], T], expected: str) -> T:
        raw = self.fields.get(name)
        try:
            if raw is None:
                raise ValueError
            return parse(raw)
        except ValueError:
            raise InputError(
                f"bad value in column {name!r}",
                path=self.path,
                line=self.line,
                text=raw,
                expected=expected,
            ) from None

    def number(self, name: str) -> float:
        """Java's ``Double.parseDouble``."""
        return self.get(name, float, "a number")

    def integer(self, name: str) -> int:
        """Java's ``Integer.parseInt``."""
        return self.get(name, int, "an integer")

    def time_ms(self, name: str, layout: str) -> int:
        """Seconds since the epoch ×1000 of ``yyyy-MM-dd?HH:mm:ss`` read as UTC.

        ``SimpleDateFormat.parse`` ignores trailing text (parking's ".145" milliseconds), so only
        the first 19 characters count; ``layout`` says which separator the Java pattern has.
        """
        sep = "T" if "T" in layout else " "

        def parse(raw: str) -> datetime:
            head = raw[:19]
            if len(head) != 19 or head[10] != sep:
                raise ValueError
            return datetime.fromisoformat(head)

        when = self.get(name, parse, f"a time {layout}")
        return int(when.replace(tzinfo=UTC).timestamp()) * 1000


def traffic_value(row: Row, payload: Payload, distance: int) -> str | None:
    """``CSPARQLAarhusTrafficStream.getStatements``: doubles, tested in this order."""
    speed = row.number("avgSpeed")
    count = row.number("vehicleCount")
    measured = row.number("avgMeasuredTime")
    text = payload.text
    if "AvgSpeed" in text:
        return double_literal(speed)
    if "VehicleCount" in text:
        return double_literal(count)
    if "MeasuredTime" in text:  # the repository's type is ct:MeasureTime: never matches
        return double_literal(measured)
    if "EstimatedTime" in text:
        return double_literal(distance / speed if speed != 0 else -1.0)
    if "CongestionLevel" in text:
        return double_literal(count / distance if distance != 0 else -1.0)
    return None


def pollution_value(row: Row) -> str:
    """``PollutionObservation.api``: the largest of the five pollutant readings (int)."""
    names = ("ozone", "particullate_matter", "carbon_monoxide", "sulfure_dioxide")
    api = row.integer(names[0])
    for name in (*names[1:], "nitrogen_dioxide"):
        api = max(api, row.integer(name))
    return long_literal(api)


def weather_value(row: Row, payload: Payload) -> str | None:
    text = payload.text
    if "Temperature" in text:
        return double_literal(row.number("tempm"))
    if "Humidity" in text:
        return long_literal(row.integer("hum"))
    if "WindSpeed" in text:
        return double_literal(row.number("wspdm"))
    return None


@dataclass
class Triples:
    """Column lists of the stream table being built."""

    stream: list[str]
    t: list[int]
    s: list[str]
    p: list[str]
    o: list[str]

    def add(self, stream: str, t: int, s: str, p: str, o: str) -> None:
        self.stream.append(stream)
        self.t.append(t)
        self.s.append(s)
        self.p.append(p)
        self.o.append(o)


# the Java obId prefix; pollution, weather and location use ``(int) Math.random() * N`` == 0
OB_ID = {
    Kind.TRAFFIC: "AarhusTrafficObservation-{_id}",
    Kind.PARKING: "AarhusParkingObservation-{_id}",
    Kind.POLLUTION: "AarhusPollutionObservation-0",
    Kind.WEATHER: "AarhusWeatherObservation-0",
    Kind.LOCATION: "UserLocationObservation-0",
}


def observation_iri(kind: Kind, row: Row, payload: Payload) -> str:
    """Deterministic stand-in for CityBench's ``defaultPrefix + obId + UUID.randomUUID()``."""
    ob_id = OB_ID[kind].format(_id=row.fields.get("_id", ""))
    local = payload.iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    return f"<{SES}{ob_id}-{row.stem}-L{row.line}-{local}>"


# the reading columns of each kind: a row with one of them empty is a missing reading
READINGS = {
    Kind.TRAFFIC: ("avgSpeed", "vehicleCount", "avgMeasuredTime"),
    Kind.POLLUTION: (
        "ozone",
        "particullate_matter",
        "carbon_monoxide",
        "sulfure_dioxide",
        "nitrogen_dioxide",
    ),
    Kind.PARKING: ("vehiclecount", "totalspaces"),
    Kind.WEATHER: ("hum", "tempm", "wspdm"),
}


def annotate_sensor_row(
    kind: Kind, row: Row, service: str, payloads: list[Payload], distance: int, out: Triples
) -> bool:
    """One CSV row of a traffic, pollution, parking or weather file; False if skipped.

    A row with an empty reading (22 rows of AarhusWeatherData0) is skipped: CityBench's
    ``Integer.parseInt("")`` fails there, ``createObservation`` returns null and the stream
    thread dies on the NullPointerException, so CityBench emits nothing for it either (nor for
    any later row, which we do import).
    """
    if any(not row.fields.get(name) for name in READINGS[kind]):
        return False
    layout = TIME_COLUMN[kind]
    t = row.time_ms(*layout)
    stream = f"<{service}>"
    chosen = payloads[:1] if kind is Kind.PARKING else payloads
    for payload in chosen:
        obs = observation_iri(kind, row, payload)
        out.add(service, t, obs, RDF_TYPE, OBSERVATION)
        out.add(service, t, obs, OBSERVED_BY, stream)
        out.add(service, t, obs, OBSERVED_PROPERTY, f"<{payload.iri}>")
        value: str | None
        if kind is Kind.TRAFFIC:
            value = traffic_value(row, payload, distance)
        elif kind is Kind.POLLUTION:
            value = pollution_value(row)
        elif kind is Kind.PARKING:
            value = long_literal(row.integer("totalspaces") - row.integer("vehiclecount"))
        else:
            value = weather_value(row, payload)
        if value is not None:
            out.add(service, t, obs, HAS_VALUE, value)
    return True


def annotate_location_row(row: Row, t: int, service: str, payload: Payload, out: Triples) -> None:
    """``CSPARQLLocationStream``: ``user|lat,lon`` → an observation with a coordinates node."""
    raw = row.fields["raw"]
    try:
        _user, coordinates = raw.split("|", 1)
        lat_text, lon_text = coordinates.split(",")[:2]
        lat, lon = float(lat_text), float(lon_text)
    except ValueError:
        raise InputError(
            "bad user location line",
            path=row.path,
            line=row.line,
            text=raw,
            expected="USER_IRI|LATITUDE,LONGITUDE",
        ) from None
    obs = observation_iri(Kind.LOCATION, row, payload)
    node = f"_:loc{row.line}"
    out.add(service, t, obs, RDF_TYPE, OBSERVATION)
    out.add(service, t, node, f"<{CT}hasLatitude>", double_literal(lat))
    out.add(service, t, node, f"<{CT}hasLongitude>", double_literal(lon))
    out.add(service, t, obs, OBSERVED_PROPERTY, f"<{payload.iri}>")
    out.add(service, t, obs, OBSERVED_BY, f"<{service}>")
    out.add(service, t, obs, f"<{SSN}featureOfInterest>", f"<{LOCATION_FOI}>")
    out.add(service, t, obs, HAS_VALUE, node)


@dataclass(frozen=True)
class Dataset:
    """What the annotation needs besides the CSV: payloads and traffic distances."""

    payloads: dict[str, list[Payload]]
    distances: dict[str, int]

    @classmethod
    def load(cls, folder: Path) -> Dataset:
        """``folder`` is CityBench's ``dataset/`` (SensorRepository.n3, MetaData/)."""
        repository = folder / "SensorRepository.n3"
        if not repository.is_file():
            raise InputError(
                "no SensorRepository.n3",
                path=folder,
                expected="CityBench's dataset folder (give it with --dataset)",
            )
        distances: dict[str, int] = {}
        metadata = folder / "MetaData" / "trafficMetaData.csv"
        if metadata.is_file():
            distances = read_distances(metadata)
        return cls(read_payloads(repository), distances)


def stream_files(sources: Sequence[Path]) -> list[Path]:
    """The ``.stream`` files named, a folder standing for every ``*.stream`` in it."""
    files: list[Path] = []
    for src in sources:
        if src.is_dir():
            found = sorted(src.glob("*.stream"))
            if not found:
                raise InputError("no .stream file in the folder", path=src)
            files.extend(found)
        elif src.is_file():
            files.append(src)
        else:
            raise InputError("no such file or folder", path=src)
    return files


def read_sensor_file(path: Path, dataset: Dataset, out: Triples) -> list[int]:
    """Annotate one file into ``out``; returns the lines skipped for a missing reading."""
    kind = kind_of(path)
    service = SES + path.stem
    payloads = dataset.payloads.get(service)
    if not payloads:
        raise InputError(
            f"the sensor repository declares no payload for {service}",
            path=path,
            expected="a service with ssn:observes in SensorRepository.n3",
        )
    with _open(path) as f:
        if kind is Kind.LOCATION:
            for i, line in enumerate(f):
                row = Row(path, i + 1, {"raw": line.rstrip("\r\n")}, path.stem)
                annotate_location_row(row, -1 - i, service, payloads[0], out)
            return []
        reader = csv.DictReader(f)
        distance = 0
        skipped: list[int] = []
        for i, fields in enumerate(reader):
            row = Row(path, i + 2, fields, path.stem)
            if kind is Kind.TRAFFIC and i == 0:
                distance = traffic_distance(row, dataset)
            if not annotate_sensor_row(kind, row, service, payloads, distance, out):
                skipped.append(row.line)
        return skipped


def traffic_distance(row: Row, dataset: Dataset) -> int:
    report = row.fields.get("REPORT_ID", "")
    if report not in dataset.distances:
        raise InputError(
            f"REPORT_ID {report!r} is not in MetaData/trafficMetaData.csv",
            path=row.path,
            line=row.line,
            expected="a report id listed in CityBench's traffic metadata",
        )
    return dataset.distances[report]


def read_citybench(
    sources: Sequence[Path], *, dataset: Path | None = None, interval_ms: int = 1000
) -> tuple[pa.Table, dict[str, object]]:
    """One multi-stream table from CityBench ``.stream`` files (or their folder).

    ``dataset`` defaults to ``../dataset`` of the first file's folder (CityBench's layout). The
    user location stream, which has no time, starts when the last of the other files imported
    with it starts (CityBench starts every stream of a query together; 0 alone) and advances
    ``interval_ms`` per line. Returns the table and its provenance parameters (files, dataset,
    interval, origin, rows skipped per file).
    """
    files = stream_files(sources)
    folder = dataset if dataset is not None else files[0].parent.parent / "dataset"
    data = Dataset.load(folder)
    out = Triples([], [], [], [], [])
    skipped: dict[str, list[int]] = {}
    starts: list[int] = []
    for path in files:
        first = len(out.t)
        lines = read_sensor_file(path, data, out)
        if kind_of(path) is not Kind.LOCATION and len(out.t) > first:
            starts.append(min(out.t[first:]))
        if lines:
            skipped[path.name] = lines
    origin = max(starts) if starts else 0
    times = [t if t >= 0 else origin + (-1 - t) * interval_ms for t in out.t]
    table = sort_by_time(stream_table(out.stream, times, out.s, out.p, out.o))
    params: dict[str, object] = {
        "source": [str(f) for f in files],
        "dataset": str(folder),
        "location_interval_ms": interval_ms,
        "location_origin_ms": origin,
        "timezone": "UTC",
        "skipped_lines": skipped,
    }
    return table, params
