"""YABench stream generator SG1: air-temperature observations from weather stations.

Reimplements YABench's SG1 generator draw for draw, so that the same seed gives the same stream
as YABench's Java tool (see ``javarandom``). Its behaviour, kept on purpose:

* each station gets a random offset ``nextInt(interval)``; stations are ordered by offset (stable)
  and then emit round-robin, every ``interval`` ms, while the next time is ≤ ``duration``
  (inclusive);
* the very first observation is stamped 0 whatever its station's offset (YABench starts its clock
  at 0 before looking at the stations);
* the value is ``nextInt(max_temp - min_temp) + min_temp`` written with one decimal, an
  ``xsd:float``.

Each observation is 7 triples at its timestamp (data model in ../shared/data/README.md). Strings
are assembled with Arrow compute kernels, never per row in Python: 2 M triples take about a
second.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsp_sdk.model.stream import DEFAULT_STREAM_IRI, STREAM_SCHEMA, StreamMeta
from rsp_sdk.streams.generators.javarandom import JavaRandom
from rsp_sdk.streams.io import conform

SSW = "http://knoesis.wright.edu/ssw/"
OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
WEATHER = "http://knoesis.wright.edu/ssw/ont/weather.owl#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD_FLOAT = "http://www.w3.org/2001/XMLSchema#float"


class YabenchParams(BaseModel):
    """gen(stations, interval, duration, seed) plus the temperature range, as in YABench."""

    model_config = ConfigDict(frozen=True)

    stations: int = Field(default=10, ge=1)
    interval_ms: int = Field(default=300_000, ge=1, lt=2**31)
    duration_ms: int = Field(default=3_600_000, ge=0)
    seed: int = 0
    min_temp: int = 0
    max_temp: int = 100
    stream: str = DEFAULT_STREAM_IRI

    @model_validator(mode="after")
    def _range(self) -> YabenchParams:
        if self.max_temp <= self.min_temp:
            raise ValueError("max_temp must be greater than min_temp")
        return self


def _observations(p: YabenchParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(station id, time ms, value) of every observation, in emission order."""
    rnd = JavaRandom(p.seed)
    offsets = rnd.next_ints(p.interval_ms, p.stations)
    order = np.argsort(offsets, kind="stable")  # Collections.sort is stable
    sorted_offsets = offsets[order]
    # Observation j is station order[j % n] in round j // n; times never decrease along j, so
    # the emitted ones are the prefix with time <= duration (observation 0 always counts).
    rounds = np.where(
        sorted_offsets <= p.duration_ms, (p.duration_ms - sorted_offsets) // p.interval_ms + 1, 0
    )
    total = max(int(rounds.sum()), 1)
    j = np.arange(total, dtype=np.int64)
    slot = j % p.stations
    times = sorted_offsets[slot] + (j // p.stations) * p.interval_ms
    times[0] = 0
    values = rnd.next_ints(p.max_temp - p.min_temp, total) + p.min_temp
    return order[slot].astype(np.int64), times.astype(np.int64), values


def generate_yabench(p: YabenchParams, *, dictionary: bool = False) -> tuple[pa.Table, StreamMeta]:
    """The SG1 stream and its metadata. ``dictionary``: the term columns stay
    dictionary-encoded (``conform``), as the oracle reads them; as strings 21 M triples hold
    ~5 GB."""
    ids, times, values = _observations(p)
    n = len(times)
    id_s = pc.cast(pa.array(ids), pa.string())
    t_s = pc.cast(pa.array(times), pa.string())
    v_s = pc.cast(pa.array(values), pa.string())
    suffix = pc.binary_join_element_wise(id_s, "_", t_s, "")  # "{id}_{ms}"
    obs = pc.binary_join_element_wise(f"<{SSW}Observation_AirTemperature_A", suffix, ">", "")
    data = pc.binary_join_element_wise(f"<{SSW}MeasureData_AirTemperature_A", suffix, ">", "")
    system = pc.binary_join_element_wise(f"<{SSW}System_A", id_s, ">", "")
    value = pc.binary_join_element_wise('"', v_s, f'.0"^^<{XSD_FLOAT}>', "")

    # Every column is dictionary-encoded: indices say which string each row takes, so no
    # string is copied per row (the Parquet writer keeps the dictionaries as they are).
    k = 7
    i = np.arange(n, dtype=np.int32)

    def interleave(*index_rows: np.ndarray | int) -> pa.Array:
        """Row r of observation j takes ``index_rows[r][j]``; rows go to position j * k + r."""
        out = np.empty((n, k), dtype=np.int32)
        for r, idx in enumerate(index_rows):
            out[:, r] = idx
        return pa.array(out.ravel())

    obs_type = f"<{WEATHER}TemperatureObservation>"
    consts = [
        obs_type,
        f"<{WEATHER}_AirTemperature>",
        f"<{OM}MeasureData>",
        f"<{WEATHER}fahrenheit>",
    ]
    preds = [
        RDF_TYPE,
        f"<{OM}observedProperty>",
        f"<{OM}procedure>",
        f"<{OM}result>",
        f"<{OM}floatValue>",
        f"<{OM}uom>",
    ]
    # Template order: obs a TemperatureObservation; observedProperty; procedure; result;
    # data a MeasureData; floatValue; uom.
    s_col = pa.DictionaryArray.from_arrays(
        interleave(i, i, i, i, n + i, n + i, n + i), pa.concat_arrays([obs, data])
    )
    p_col = pa.DictionaryArray.from_arrays(interleave(0, 1, 2, 3, 0, 4, 5), pa.array(preds))
    o_dict = pa.concat_arrays([pa.array(consts), system, data, value])
    o_col = pa.DictionaryArray.from_arrays(
        interleave(0, 1, 4 + i, 4 + n + i, 2, 4 + 2 * n + i, 3), o_dict
    )
    table = pa.table(
        {
            "stream": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(n * k, np.int32)), pa.array([p.stream])
            ),
            "t_app_ms": pa.array(np.repeat(times, k)),
            "s": s_col,
            "p": p_col,
            "o": o_col,
        }
    )
    meta = StreamMeta(producer="generate:yabench", parameters=p.model_dump(), streams=[p.stream])
    return conform(table, STREAM_SCHEMA, dictionary=dictionary), meta
