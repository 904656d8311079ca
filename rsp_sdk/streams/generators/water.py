"""Water-network monitoring streams of Ren et al. 2016 ("On measuring performances of C-SPARQL and
CQELS", Stream Reasoning workshop 2016), with their static sensor data.

The paper describes the workload (messages carrying flow observations, each with tags, and a
chlorine observation every 50 observations; static data giving each sensor a label, a manufacturer
and a sector) but prints no triples. Its authors' reference code
(github.com/renxiangnan/Reference_Stream_Reasoning_2016: ``StreamGenerator``,
``StaticDataCreator``, the Q1–Q6 queries) fixes every term, so we follow that code rather than
inventing SSN/SOSA terms: the six published queries then run unchanged on our data.

Stream, one *message* ``c`` (c = 1, 2, …) at a time, all its triples at the same timestamp::

    ex:message_c      ex:observeFlow     ex:observation_c .   # ex:observeChlorine iff c % 50 == 0
    ex:observation_c  ex:hasTag          ex:tag_c1 .          # one row per tag, k = 1 … tags
    ex:observation_c  ex:hasTag          ex:tag_c2 .
    ex:observation_c  ex:hasTag          ex:tag_c3 .

``ex:`` is ``http://myexample.org/`` (the namespace of Ren's static data and CQELS generator; their
C-SPARQL generator prefixed message ids with the stream IRI instead, which made Q6's join with the
static data impossible, so we use the static namespace everywhere). The tag id is Ren's string
concatenation of the message number and the tag number (``"tag_" + c + k`` in Java), which Q4's
``regex(str(?tag), '1$')`` relies on; with 10 or more tags that concatenation would collide
(``tag_1`` + ``11`` = ``tag_11`` + ``1``), so from 10 tags on we write ``tag_c_k``.

Messages are evenly spaced at ``rate`` *triples* per second (the paper's unit of stream rate):
message c is stamped ``floor((c - 1) · (1 + tags) · 1000 / rate)`` ms. The message order is
Ren's: message triple first, then its tags. With ``streams`` > 1 (the paper's "number of streams"
experiment) each stream ``{stream}1 … {stream}N`` carries the same message sequence, like Ren's
parallel generators; message and observation ids are shared, so cross-stream joins work.

Static data, in the static schema::

    ex:sensor_i       rdfs:label         ex:label_i .         # an IRI, as in Ren's data
    ex:sensor_i       ex:belongsTo       ex:sector_j .        # j = i unless --sectors is given
    ex:sensor_i       ex:isCreatedBy     ex:manufacture_M .   # M = flowSensor_A…D | chlorineSensor
    ex:observation_c  ex:isProducedBy    ex:sensor_i .        # for c = 1 … linked_observations

Of the ``sensors`` sensors the last ``max(1, sensors // chlorine_every)`` are chlorine sensors,
the others flow sensors; the n-th flow (chlorine) observation is produced by the flow (chlorine)
sensors in turn. With 50 sensors this is exactly Ren's layout: observation c comes from
sensor ``(c - 1) % 50 + 1`` and sensor 50 is the chlorine sensor. Flow-sensor manufacturers are
drawn uniformly from A–D with the seed (Ren used an unseeded ``Math.random``); the stream itself has
no randomness at all, by design of the workload.
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.streams.generators.assemble import (
    I64,
    RDFS_LABEL,
    Generated,
    Index,
    Rows,
    TermPool,
    event_rows,
    rng_for,
    static_table,
    stream_table,
    to_str,
)
from rsp_sdk.streams.generators.water_params import EX as EX
from rsp_sdk.streams.generators.water_params import WaterParams

FLOW_MANUFACTURERS = ("flowSensor_A", "flowSensor_B", "flowSensor_C", "flowSensor_D")
CHLORINE_MANUFACTURER = "chlorineSensor"


def chlorine_sensor_count(p: WaterParams) -> int:
    return max(1, p.sensors // p.chlorine_every)


def producing_sensor(p: WaterParams, c: I64) -> I64:
    """1-based id of the sensor that produced observation c (see the module docstring)."""
    n_chl = chlorine_sensor_count(p)
    n_flow = p.sensors - n_chl
    chlorine = c % p.chlorine_every == 0
    nth_chl = c // p.chlorine_every  # chlorine observations up to and including c
    nth_flow = c - nth_chl
    return np.where(chlorine, n_flow + 1 + (nth_chl - 1) % n_chl, 1 + (nth_flow - 1) % n_flow)


def generate_water(p: WaterParams) -> Generated:
    n = p.message_count
    ns = p.namespace
    c = np.arange(1, n + 1, dtype=np.int64)
    t = (c - 1) * (1 + p.tags) * 1000 // p.rate
    pool = TermPool()

    message = pool.iris(ns + "message_", c)
    observation = pool.iris(ns + "observation_", c)
    # Tag (c, k): Ren's "tag_" + c + k, or tag_c_k from 10 tags on (see module docstring).
    c_str = to_str(np.repeat(c, p.tags))
    k_str = to_str(np.tile(np.arange(1, p.tags + 1, dtype=np.int64), n))
    sep = "" if p.tags < 10 else "_"
    tag = pool.add(pc.binary_join_element_wise(f"<{ns}tag_", c_str, sep, k_str, ">", ""))
    flow, chlorine, has_tag = (
        pool.iri(ns + x) for x in ("observeFlow", "observeChlorine", "hasTag")
    )

    i = c - 1
    template: list[tuple[Index, Index, Index]] = [
        (message + i, np.where(c % p.chlorine_every == 0, chlorine, flow), observation + i)
    ]
    template += [(observation + i, has_tag, tag + i * p.tags + j) for j in range(p.tags)]
    stream = stream_table(pool, [(iri, event_rows(t, c, template)) for iri in p.stream_iris])

    sensor = pool.iris(ns + "sensor_", np.arange(1, p.sensors + 1, dtype=np.int64))
    static = static_table(
        pool, [_sensor_rows(p, pool, sensor), _link_rows(p, pool, sensor, observation, n)]
    )
    meta = StreamMeta(
        producer="generate:water", parameters=p.model_dump(mode="json"), streams=p.stream_iris
    )
    return Generated(stream, static, meta)


def _sensor_rows(p: WaterParams, pool: TermPool, sensor: int) -> Rows:
    """Label, sector and manufacturer of every sensor (``sensor``: pool index of sensor_1)."""
    rng = rng_for(p.seed)
    ns = p.namespace
    ids = np.arange(1, p.sensors + 1, dtype=np.int64)
    n_flow = p.sensors - chlorine_sensor_count(p)
    label = pool.iris(ns + "label_", ids)
    sector = pool.iris(
        ns + "sector_", ids if p.sectors is None else rng.integers(1, p.sectors + 1, p.sensors)
    )
    makers = [
        pool.iri(f"{ns}manufacture_{m}") for m in (*FLOW_MANUFACTURERS, CHLORINE_MANUFACTURER)
    ]
    maker_of = np.full(p.sensors, makers[-1], np.int64)
    maker_of[:n_flow] = np.asarray(makers[:-1], np.int64)[
        rng.integers(0, len(FLOW_MANUFACTURERS), n_flow)
    ]
    i = ids - 1
    return event_rows(
        np.zeros(p.sensors, np.int64),
        ids,
        [
            (sensor + i, pool.iri(RDFS_LABEL), label + i),
            (sensor + i, pool.iri(ns + "belongsTo"), sector + i),
            (sensor + i, pool.iri(ns + "isCreatedBy"), maker_of),
        ],
    )


def _link_rows(p: WaterParams, pool: TermPool, sensor: int, observation: int, n: int) -> Rows:
    """``observation_c ex:isProducedBy sensor_i`` for the first ``linked_observations`` messages."""
    linked = n if p.linked_observations is None else min(n, p.linked_observations)
    c = np.arange(1, linked + 1, dtype=np.int64)
    return event_rows(
        np.zeros(linked, np.int64),
        c,
        [
            (
                observation + c - 1,
                pool.iri(p.namespace + "isProducedBy"),
                sensor + producing_sensor(p, c) - 1,
            )
        ],
    )
