"""``rsp generate …``: reproducible synthetic streams."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from rsp_sdk.cli.common import RspTyper, console, duration_ms, emit_json
from rsp_sdk.errors import InputError
from rsp_sdk.streams.generators.social_params import SocialParams
from rsp_sdk.streams.generators.water_params import WaterParams
from rsp_sdk.streams.vocab import DEFAULT_STREAM_IRI
from rsp_sdk.util.outpath import atomic_files, check_output

if TYPE_CHECKING:  # the generators (numpy, pyarrow) load when a command runs
    import pyarrow as pa

    from rsp_sdk.model.stream import StreamMeta
    from rsp_sdk.streams.generators.assemble import Generated


def check_iri(iri: str, option: str) -> None:
    """``rsp_sdk.model.terms.check_iri``, loaded when used (it needs pyoxigraph)."""
    from rsp_sdk.model.terms import check_iri as check

    check(iri, option=option)


M = TypeVar("M", bound=BaseModel)

# parameter fields whose option has another name than --field-name
_OPTION_OF = {"period_ms": "--duration", "duration_ms": "--duration", "interval_ms": "--interval"}


def option_name(field: str) -> str:
    """The command-line option that sets a generator parameter field."""
    return _OPTION_OF.get(field, "--" + field.replace("_", "-"))


def validated(model: type[M], **values: Any) -> M:
    """``model(**values)``, a limit broken reported in the user's option names (``--users:
    must be greater than or equal to 2, got 0``) instead of a pydantic dump of field names."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            msg = str(error["msg"]).removeprefix("Value error, ")
            msg = msg.replace("Input should be", "must be")
            if error["loc"]:
                field = str(error["loc"][0])
                problems.append(f"{option_name(field)}: {msg}, got {error['input']!r}")
            else:  # a rule over several parameters: name them as options
                for field in model.model_fields:
                    msg = re.sub(rf"\b{field}\b", option_name(field), msg)
                problems.append(msg)
        raise InputError("; ".join(problems)) from None


app = RspTyper(
    help="Generate reproducible streams: same parameters and seed, same bytes.",
    no_args_is_help=True,
)

Out = Annotated[Path, typer.Option("--output", "-o", help="output Parquet file")]
Json = Annotated[bool, typer.Option("--json", help="print a JSON summary")]
StreamIri = Annotated[str, typer.Option("--stream", help="IRI naming the stream")]
StaticOut = Annotated[
    Path | None,
    typer.Option(
        "--static-output",
        help="static-data Parquet file (default: OUT with .static.parquet for .parquet)",
    ),
]
Seed = Annotated[int, typer.Option(help="seed of the PCG64 generator")]


def _finish(table: pa.Table, meta: StreamMeta, out: Path, started: float, as_json: bool) -> None:
    from rsp_sdk.streams.io import write_stream

    write_stream(table, out, meta)
    elapsed = time.perf_counter() - started
    rate = table.num_rows / elapsed if elapsed > 0 else float("inf")
    if as_json:
        emit_json(
            {
                "output": str(out),
                "triples": table.num_rows,
                "seconds": elapsed,
                "triples_per_s": rate,
                "parameters": meta.parameters,
            }
        )
    else:
        console.print(
            f"wrote {table.num_rows:,} triples to {out} in {elapsed:.2f} s ({rate:,.0f} triples/s)"
        )


@app.command("yabench")
def yabench(
    out: Out,
    stations: Annotated[int, typer.Option(help="number of weather stations")] = 10,
    interval: Annotated[
        int,
        typer.Option(
            metavar="DURATION",
            parser=duration_ms,
            help="time between two observations of a station (ms, 5s, 5m)",
        ),
    ] = 300_000,
    duration: Annotated[
        int,
        typer.Option(
            metavar="DURATION", parser=duration_ms, help="stream duration (ms, 5s, 5m; inclusive)"
        ),
    ] = 3_600_000,
    seed: Annotated[int, typer.Option(help="java.util.Random seed, as YABench's -seed")] = 0,
    min_temp: Annotated[int, typer.Option(help="lowest temperature (inclusive)")] = 0,
    max_temp: Annotated[int, typer.Option(help="highest temperature (exclusive)")] = 100,
    stream: StreamIri = DEFAULT_STREAM_IRI,
    as_json: Json = False,
) -> None:
    """YABench SG1: air temperature observations, 7 triples each, draw for draw as YABench."""
    started = time.perf_counter()
    check_output(out, what="a Parquet file path (--output)")
    check_iri(stream, option="--stream")
    from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

    params = validated(
        YabenchParams,
        stations=stations,
        interval_ms=interval,
        duration_ms=duration,
        seed=seed,
        min_temp=min_temp,
        max_temp=max_temp,
        stream=stream,
    )
    with console.status("generating …", spinner="dots"):
        table, meta = generate_yabench(params)
        _finish(table, meta, out, started, as_json)


@app.command("rooms")
def rooms(
    out: Out,
    description: Annotated[
        str | None,
        typer.Argument(metavar="DESCRIPTION", help="e.g. '0: m1@r1 m2@r1; 1000: m1@r2'"),
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", help="read the description here")] = None,
    namespace: Annotated[str, typer.Option(help="namespace of individuals and rooms")] = (
        "http://example.org/"
    ),
    stream: StreamIri = DEFAULT_STREAM_IRI,
    as_json: Json = False,
) -> None:
    """Micro-stream of individuals detected in rooms, for functional tests."""
    started = time.perf_counter()
    check_output(out, what="a Parquet file path (--output)")
    check_iri(stream, option="--stream")
    if (description is None) == (file is None):
        raise typer.BadParameter("give either a DESCRIPTION or --file")
    text = file.read_text(encoding="utf-8") if file is not None else str(description)
    from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms

    params = validated(RoomsParams, description=text, namespace=namespace, stream=stream)
    table, meta = generate_rooms(params, source=file or "<description>")
    _finish(table, meta, out, started, as_json)


def static_path_for(out: Path) -> Path:
    """Default static-data file next to the stream file: a.parquet -> a.static.parquet."""
    if out.suffix == ".parquet":
        return out.with_suffix(".static.parquet")
    return out.with_name(out.name + ".static.parquet")


def _check_outputs(out: Path, static_out: Path | None) -> None:
    """Refuse unusable output paths before generating anything."""
    static_path = static_out if static_out is not None else static_path_for(out)
    a = check_output(out, what="a Parquet file path (--output)")
    b = check_output(static_path, what="a Parquet file path (--static-output)")
    if a.resolve() == b.resolve():
        raise typer.BadParameter("--static-output must differ from --output")


def _finish_with_static(
    gen: Generated, out: Path, static_out: Path | None, started: float, as_json: bool
) -> None:
    """Write streams and static data; a failure leaves neither file half-written."""
    import pyarrow.compute as pc

    from rsp_sdk.streams.io import write_static, write_stream

    static_path = static_out if static_out is not None else static_path_for(out)
    static_meta = gen.meta.model_copy(update={"streams": []})
    with atomic_files(out, static_path) as (tmp_stream, tmp_static):
        write_stream(gen.stream, tmp_stream, gen.meta)
        write_static(gen.static, tmp_static, static_meta)
    elapsed = time.perf_counter() - started
    total = gen.stream.num_rows + gen.static.num_rows
    rate = total / elapsed if elapsed > 0 else float("inf")
    counts = pc.value_counts(gen.stream.column("stream"))
    per_stream = {
        v.as_py(): c.as_py() for v, c in zip(counts.field(0), counts.field(1), strict=True)
    }
    if as_json:
        emit_json(
            {
                "output": str(out),
                "static_output": str(static_path),
                "triples": gen.stream.num_rows,
                "static_triples": gen.static.num_rows,
                "streams": {iri: per_stream.get(iri, 0) for iri in gen.meta.streams},
                "seconds": elapsed,
                "triples_per_s": rate,
                "parameters": gen.meta.parameters,
            }
        )
    else:
        console.print(
            f"wrote {gen.stream.num_rows:,} triples in {len(gen.meta.streams)} stream(s) to {out}"
            f" and {gen.static.num_rows:,} static triples to {static_path}"
            f" in {elapsed:.2f} s ({rate:,.0f} triples/s)"
        )


_SOCIAL = SocialParams()


@app.command("social")
def social(
    out: Out,
    static_out: StaticOut = None,
    users: Annotated[int, typer.Option(help="users in the network")] = _SOCIAL.users,
    period: Annotated[
        int,
        typer.Option(
            "--duration",
            "--period",
            metavar="DURATION",
            parser=duration_ms,
            help="length of the streams (ms, 5s, 5m, 7d; --period is an older name)",
        ),
    ] = _SOCIAL.period_ms,
    start: Annotated[
        str | None, typer.Option(help="wall-clock time of t=0 (default 2010-01-01T00:00:00Z)")
    ] = None,
    seed: Seed = _SOCIAL.seed,
    max_posts_per_week: Annotated[
        float, typer.Option(help="posts per user per week at full activity")
    ] = _SOCIAL.max_posts_per_week,
    max_comments_per_week: Annotated[
        float, typer.Option(help="comments per user per week at full activity")
    ] = _SOCIAL.max_comments_per_week,
    max_likes_per_week: Annotated[
        float, typer.Option(help="likes (posts and photos) per user per week at full activity")
    ] = _SOCIAL.max_likes_per_week,
    max_photos_per_week: Annotated[
        float, typer.Option(help="photos per user per week at full activity")
    ] = _SOCIAL.max_photos_per_week,
    max_gps_sessions_per_week: Annotated[
        float, typer.Option(help="GPS sessions (1-10 fixes, 5 s apart) per user per week")
    ] = _SOCIAL.max_gps_sessions_per_week,
    gps_users: Annotated[
        float, typer.Option(help="share of users who share GPS positions")
    ] = _SOCIAL.gps_users,
    max_user_tags: Annotated[
        int, typer.Option(help="most friends tagged on one photo")
    ] = _SOCIAL.max_user_tags,
    p_location: Annotated[
        float, typer.Option(help="share of friendships drawn among users of one city")
    ] = _SOCIAL.p_location,
    p_university: Annotated[
        float, typer.Option(help="share of friendships drawn among users of one university")
    ] = _SOCIAL.p_university,
    p_interest: Annotated[
        float, typer.Option(help="share of friendships drawn among users sharing an interest")
    ] = _SOCIAL.p_interest,
    min_friends: Annotated[int, typer.Option(help="smallest target degree")] = (
        _SOCIAL.min_friends
    ),
    max_friends: Annotated[int, typer.Option(help="largest target degree")] = (_SOCIAL.max_friends),
    degree_exponent: Annotated[
        float, typer.Option(help="power-law exponent of the degree distribution")
    ] = _SOCIAL.degree_exponent,
    activity_exponent: Annotated[
        float, typer.Option(help="Pareto exponent of per-user activity (smaller: more skewed)")
    ] = _SOCIAL.activity_exponent,
    cities: Annotated[int, typer.Option(help="cities users live in")] = _SOCIAL.cities,
    stream_prefix: Annotated[
        str, typer.Option(help="prefix of the five stream IRIs (…poststream, …gpsstream)")
    ] = _SOCIAL.stream_prefix,
    as_json: Json = False,
) -> None:
    """LSBench-like social network: five streams of posts, comments, likes and photos.

    Profiles and friendships are static data; photos carry user tags and GPS positions."""
    started = time.perf_counter()
    params = validated(
        SocialParams,
        users=users,
        period_ms=period,
        **({"start": start} if start is not None else {}),
        seed=seed,
        max_posts_per_week=max_posts_per_week,
        max_comments_per_week=max_comments_per_week,
        max_likes_per_week=max_likes_per_week,
        max_photos_per_week=max_photos_per_week,
        max_gps_sessions_per_week=max_gps_sessions_per_week,
        gps_users=gps_users,
        max_user_tags=max_user_tags,
        p_location=p_location,
        p_university=p_university,
        p_interest=p_interest,
        min_friends=min_friends,
        max_friends=max_friends,
        degree_exponent=degree_exponent,
        activity_exponent=activity_exponent,
        cities=cities,
        stream_prefix=stream_prefix,
    )
    check_iri(stream_prefix + "poststream", option="--stream-prefix")
    _check_outputs(out, static_out)
    from rsp_sdk.streams.generators.social import generate_social

    with console.status("generating …", spinner="dots"):
        gen = generate_social(params)
        _finish_with_static(gen, out, static_out, started, as_json)


_WATER = WaterParams()


@app.command("water")
def water(
    out: Out,
    static_out: StaticOut = None,
    sensors: Annotated[int, typer.Option(help="sensors in the static data")] = _WATER.sensors,
    messages: Annotated[
        int | None, typer.Option(help="messages per stream (default 10000)")
    ] = None,
    duration: Annotated[
        int | None,
        typer.Option(
            metavar="DURATION",
            parser=duration_ms,
            help="stream length (ms, 5s, 5m), instead of --messages",
        ),
    ] = None,
    rate: Annotated[int, typer.Option(help="triples per second in each stream")] = _WATER.rate,
    tags: Annotated[int, typer.Option(help="tags per observation")] = _WATER.tags,
    chlorine_every: Annotated[
        int, typer.Option(help="message c is a chlorine observation iff c % N == 0")
    ] = _WATER.chlorine_every,
    streams: Annotated[
        int, typer.Option(help="parallel streams with the same content")
    ] = _WATER.streams,
    sectors: Annotated[
        int | None, typer.Option(help="sectors to spread sensors over (default one each)")
    ] = None,
    linked_observations: Annotated[
        int | None,
        typer.Option(help="observations linked to their sensor in the static data (default all)"),
    ] = None,
    seed: Seed = _WATER.seed,
    namespace: Annotated[str, typer.Option(help="namespace of all terms")] = _WATER.namespace,
    stream: Annotated[
        str, typer.Option("--stream", help="stream IRI (with --streams N: IRI1 … IRIN)")
    ] = _WATER.stream,
    as_json: Json = False,
) -> None:
    """Ren et al. 2016 water network: flow observations with tags, static sensor data.

    A chlorine observation every 50 messages; the static data gives each sensor a label, a
    manufacturer and a sector."""
    started = time.perf_counter()
    params = validated(
        WaterParams,
        sensors=sensors,
        messages=messages,
        duration_ms=duration,
        rate=rate,
        tags=tags,
        chlorine_every=chlorine_every,
        streams=streams,
        sectors=sectors,
        linked_observations=linked_observations,
        seed=seed,
        namespace=namespace,
        stream=stream,
    )
    check_iri(stream, option="--stream")
    _check_outputs(out, static_out)
    from rsp_sdk.streams.generators.water import generate_water

    with console.status("generating …", spinner="dots"):
        gen = generate_water(params)
        _finish_with_static(gen, out, static_out, started, as_json)
