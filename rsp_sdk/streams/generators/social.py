"""An LSBench (S2Gen-like) social network: static profiles and friendships, five activity streams.

LSBench (Le-Phuoc et al., ISWC 2012) feeds RSP engines from S2Gen, a generator of a social network
in the SIB vocabulary. This generator keeps LSBench's vocabulary, IRIs and stream layout, so the
LSBench streaming queries (e.g. CQELS's ``STREAM <http://deri.org/poststream> {?user
sioc:creator_of ?post}``) run on its output unchanged, and rebuilds the data in a vectorised way.

Prefixes: ``sib: <http://www.ins.cwi.nl/sib/vocabulary/>``, ``sibu: <…/sib/user/>``,
``sibp: <…/sib/person/>``, ``sibfo: <…/sib/forum/>``, ``sibpo: <…/sib/post/>``,
``sibc: <…/sib/post/comment/>``, ``sibpha: <…/sib/photoalbum/>``,
``sibpho: <…/sib/photoalbum/photo/>``, ``sibgps: <…/sib/gps/>`` (all under
``http://www.ins.cwi.nl/sib/``), ``foaf:``, ``sioc: <http://rdfs.org/sioc/ns#>``,
``sioct: <http://rdfs.org/sioc/types#>``, ``dc: <http://purl.org/dc/elements/1.1/>``,
``dbp: <http://dbpedia.org/resource/>``, ``dbpprop: <http://dbpedia.org/property/>``,
``dbpo: <http://dbpedia.org/ontology/>``, ``xsd:``. Users are numbered 0 … users-1.

Static data (second Parquet file, static schema) — per user i::

    sibp:pi  a foaf:Person ; foaf:firstName "…" ; foaf:lastName "…" ; foaf:gender "male"|"female" ;
             foaf:birthday "1984-03-02"^^xsd:date ; foaf:based_near dbp:City ;
             dbpprop:latd "…"^^xsd:double ; dbpprop:longd "…"^^xsd:double ;
             foaf:organization "University of City" ; sib:class_year "2006"^^xsd:gYear .
    sibu:ui  a sib:User ; sioc:account_of sibp:pi ; dc:date "…"^^xsd:dateTime (joined) ;
             sioc:moderator_of sibfo:foi ; sioc:subscriber_of sibfo:foi ;
             sioc:creator_of sibpha:pai ; sib:interest "Jazz" (one per interest) ;
             foaf:knows sibu:uj (for every friend j, written from both sides as S2Gen does) .
    sibfo:foi a sioc:Forum .      sibpha:pai a sioct:ImageGallery .

Profiles and friendships (correlated with city, university and interests, heavy-tailed degrees)
are described in ``social_graph``. Where S2Gen's output is malformed we deviate on purpose, so that
every term is valid RDF: it writes ``foaf:based_near`` twice (IRI and literal) and
``sib:class_year`` as a bare year typed ``xsd:date``; we keep only the IRI and type the year
``xsd:gYear``. Its ``sioct:`` namespace is misspelled (``…/sioc/type#``); we use SIOC's
``…/sioc/types#``. We leave out S2Gen's browser, IP-address and user-agent noise triples and its
groups; every user has one wall forum and one photo album.

Streams (one Parquet file, rows sorted by time; stream IRIs as in LSBench's CQELS queries,
``--stream-prefix`` changes ``http://deri.org/``):

* ``http://deri.org/poststream`` — posts and comments. A post::

      sibpo:poK a sib:Post , sioc:Post ; dc:created "…"^^xsd:dateTime ; sioc:content "…" .
      sibfo:foW sioc:container_of sibpo:poK .     # the author's wall (80 %) or a friend's wall
      sibu:uA   sioc:creator_of   sibpo:poK .
      sibpo:poK sib:hashtag "Jazz" .              # 0–3, drawn from the author's interests

  a comment (on a recent post of a friend, or of the commenter, written before the comment)::

      sibc:coM a sib:Comment ; dc:created "…"^^xsd:dateTime ; sioc:reply_of sibpo:poK ;
               sioc:content "…" .
      sibpo:poK sioc:container_of sibc:coM .   sibu:uC sioc:creator_of sibc:coM .

* ``http://deri.org/likedpoststream`` — ``sibu:uX sib:like sibpo:poK`` (a friend's recent post).
* ``http://deri.org/photostream`` — a photo::

      sibpho:phoK a sib:Photo ; dc:created "…"^^xsd:dateTime ; dbpo:location "City" ;
                  dbpprop:latd "…"^^xsd:double ; dbpprop:longd "…"^^xsd:double .
      sibpha:paA sioc:container_of sibpho:phoK .     # the owner's album
      sibpho:phoK sib:usertag sibu:uF .              # 0 – max_user_tags friends of the owner

* ``http://deri.org/likedphotostream`` — ``sibu:uX sib:like sibpho:phoK``.
* ``http://deri.org/gpsstream`` — sessions of up to 10 fixes 5 s apart near the user's city::

      sibu:uX sib:trackedAt sibgps:gpsK .
      sibgps:gpsK dbpprop:latd "…"^^xsd:double ; dbpprop:longd "…"^^xsd:double ;
                  sib:trackedTime "…"^^xsd:dateTime ; sib:trackedLocation "City" .

Activity is skewed: user i has an activity level a_i = min(1, X_i / x99) with X_i Pareto
(``activity_exponent``) and x99 its 99th percentile, so most users are nearly silent and about 1 %
act at the maximum. Over a period of w weeks user i writes Poisson(max_posts_per_week · w · a_i)
posts (capped at ⌈max_posts_per_week · w⌉), and likewise comments, likes (each on a post or on a
photo with equal probability), photos and GPS sessions (only a ``gps_users`` share of users share
positions). Event times are uniform over [0, period); ``dc:created`` is ``start`` plus the event's
application time. Ids of posts, comments, photos and fixes follow time order. Comments and likes
go to a recent earlier post/photo of the chosen user (geometrically favouring the latest) and are
dropped when that user has none yet, so their counts are a little below the drawn ones.

Every term comes from the seed through numpy's PCG64: same parameters and seed, same bytes.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.streams.generators import social_dicts as dicts
from rsp_sdk.streams.generators.assemble import (
    RDF_TYPE,
    XSD,
    Generated,
    Rows,
    TermPool,
    child_rows,
    event_rows,
    rng_for,
    static_table,
    stream_table,
    to_str,
)
from rsp_sdk.streams.generators.social_graph import I64, Population, pick, population
from rsp_sdk.streams.generators.social_params import STREAM_NAMES as STREAM_NAMES
from rsp_sdk.streams.generators.social_params import WEEK_MS, SocialParams

F64 = npt.NDArray[np.float64]
SIB = "http://www.ins.cwi.nl/sib/"
SIBV = SIB + "vocabulary/"
FOAF = "http://xmlns.com/foaf/0.1/"
SIOC = "http://rdfs.org/sioc/ns#"
SIOCT = "http://rdfs.org/sioc/types#"
DC = "http://purl.org/dc/elements/1.1/"
DBP = "http://dbpedia.org/resource/"
DBPPROP = "http://dbpedia.org/property/"
DBPO = "http://dbpedia.org/ontology/"
MAX_HASHTAGS = 3
SENTENCES = 512
GPS_FIXES_PER_SESSION = 10
GPS_FIX_INTERVAL_MS = 5000
MATCH_ROUNDS = 5


def generate_social(p: SocialParams) -> Generated:
    rng = rng_for(p.seed)
    people = population(
        rng,
        users=p.users,
        cities=p.cities,
        universities_per_city=p.universities_per_city,
        interests=len(dicts.INTERESTS),
        max_interests=p.max_interests,
        min_friends=p.min_friends,
        max_friends=p.max_friends,
        gamma=p.degree_exponent,
        p_location=p.p_location,
        p_university=p.p_university,
        p_interest=p.p_interest,
    )
    activity = _activity(rng, p.users, p.activity_exponent)
    pool = TermPool()
    terms = _Terms(pool, p, rng)
    static_rows = _static_rows(terms, people, rng)
    likes = _like_plan(p, activity, rng)
    post_parts, post_likes = _post_streams(terms, people, activity, likes, rng)
    photo_parts, photo_likes = _photo_streams(terms, people, activity, likes, rng)
    gps = _gps_stream(terms, people, activity, rng)
    iris = p.stream_iris
    stream = stream_table(
        pool,
        [
            (iris[0], post_parts),
            (iris[1], post_likes),
            (iris[2], photo_parts),
            (iris[3], photo_likes),
            (iris[4], gps),
        ],
    )
    static = static_table(pool, static_rows)  # after the streams: one concatenation of the pool
    meta = StreamMeta(
        producer="generate:social", parameters=p.model_dump(mode="json"), streams=iris
    )
    return Generated(stream, static, meta)


# --- activity -------------------------------------------------------------------------------


def _activity(rng: np.random.Generator, users: int, exponent: float) -> F64:
    """a_i in (0, 1]: Pareto(exponent) scaled by its 99th percentile and capped at 1."""
    x: F64 = (1.0 - rng.random(users)) ** (-1.0 / exponent)
    a: F64 = np.minimum(x / 100.0 ** (1.0 / exponent), 1.0)
    return a


def _counts(rng: np.random.Generator, activity: F64, max_per_week: float, weeks: float) -> I64:
    """Events per user in the period: Poisson(max · weeks · a_i), capped at ⌈max · weeks⌉."""
    cap = math.ceil(max_per_week * weeks)
    return np.minimum(rng.poisson(max_per_week * weeks * activity), cap).astype(np.int64)


def _by_time(t: I64, who: I64) -> I64:
    """Order of events by (time, user): ids are then assigned in stream order."""
    return np.lexsort((who, t))


def _recent(
    rng: np.random.Generator, users: int, owner: I64, t_item: I64, target: I64, t: I64, period: int
) -> I64:
    """For each (target user, time t): the id of a recent item of that user created before t.

    Items are indexed by id, ``owner``/``t_item`` give their user and time. The latest earlier
    item is taken with probability 1/2, the one before it with 1/4, and so on; -1 where the user
    has no earlier item (or where ``target`` is -1).
    """
    out = np.full(len(target), -1, np.int64)
    if not len(owner):  # nobody made an item (a short period, few users): nothing to point at
        return out
    by_owner = np.lexsort((t_item, owner))
    key = owner[by_owner] * period + t_item[by_owner]
    ptr = np.searchsorted(owner[by_owner], np.arange(users + 1))
    ok = target >= 0
    tgt = target[ok]
    end = np.searchsorted(key, tgt * period + t[ok], side="left")  # first item not before t
    before = end - ptr[tgt]
    back = np.minimum(rng.geometric(0.5, len(tgt)) - 1, np.maximum(before - 1, 0))
    out[ok] = np.where(before > 0, by_owner[np.maximum(end - 1 - back, 0)], -1)
    return out


def _on_friends_items(
    rng: np.random.Generator,
    p: SocialParams,
    people: Population,
    owner: I64,
    t_item: I64,
    who: I64,
    t: I64,
    own_share: float,
) -> I64:
    """For each action (user ``who`` at time ``t``): a recent earlier item of one of the user's
    friends (or, with probability ``own_share``, of the user), or -1.

    A random friend is often silent, so up to ``MATCH_ROUNDS`` friends are tried in turn, each
    round a vectorised pass over the actions still unmatched.
    """
    on = np.full(len(who), -1, np.int64)
    todo = np.arange(len(who))
    for _ in range(MATCH_ROUNDS):
        friend = pick(people.friend_ptr, people.friend, who[todo], rng)
        own = (rng.random(len(todo)) < own_share) | (friend < 0) if own_share > 0 else friend < 0
        target = np.where(own, who[todo] if own_share > 0 else -1, friend)
        on[todo] = _recent(rng, p.users, owner, t_item, target, t[todo], p.period_ms)
        todo = todo[on[todo] < 0]
        if not len(todo):
            break
    return on


# --- terms ----------------------------------------------------------------------------------


class _Terms:
    """Pool indices of the terms shared by the static data and the streams."""

    def __init__(self, pool: TermPool, p: SocialParams, rng: np.random.Generator) -> None:
        self.pool, self.p = pool, p
        ids = np.arange(p.users, dtype=np.int64)
        self.user = pool.iris(SIB + "user/u", ids)
        self.person = pool.iris(SIB + "person/p", ids)
        self.forum = pool.iris(SIB + "forum/fo", ids)
        self.album = pool.iris(SIB + "photoalbum/pa", ids)
        cities = dicts.CITIES[: p.cities]
        self.city_iri = pool.add([f"<{DBP}{c[0]}>" for c in cities])
        self.city_label = pool.literals([c[1] for c in cities])
        self.city_lat = np.array([c[2] for c in cities])
        self.city_lon = np.array([c[3] for c in cities])
        self.interest = pool.literals(list(dicts.INTERESTS))
        self.sentence = pool.literals(_sentences(rng))
        self.start_ms = int(p.start.timestamp() * 1000)

    def const(self, iri: str) -> int:
        return self.pool.iri(iri)

    def iris(self, prefix: str, ids: I64) -> int:
        return self.pool.iris(prefix, ids)

    def datetimes(self, t_ms: I64) -> int:
        """``"…"^^xsd:dateTime`` literals of application times (ms after ``start``)."""
        stamps = pa.array(t_ms + self.start_ms, pa.timestamp("ms", tz="UTC"))
        return self.pool.literals(
            pc.strftime(stamps, format="%Y-%m-%dT%H:%M:%SZ"), XSD + "dateTime"
        )

    def doubles(self, values: F64) -> int:
        return self.pool.literals(to_str(np.round(values, 6)), XSD + "double")


def _sentences(rng: np.random.Generator) -> list[str]:
    """A pool of short synthetic texts (``sioc:content``), drawn once per dataset."""
    words = np.array(dicts.WORDS)
    lengths = rng.integers(5, 16, SENTENCES)
    picks = rng.integers(0, len(words), int(lengths.sum()))
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [" ".join(words[picks[a:b]]).capitalize() + "." for a, b in itertools.pairwise(bounds)]


# --- static data ----------------------------------------------------------------------------


def _static_rows(terms: _Terms, people: Population, rng: np.random.Generator) -> list[Rows]:
    p, pool = terms.p, terms.pool
    n = p.users
    i = np.arange(n, dtype=np.int64)
    zero = np.zeros(n, np.int64)
    first_f = pool.literals(list(dicts.FIRST_NAMES_FEMALE))
    first_m = pool.literals(list(dicts.FIRST_NAMES_MALE))
    first = np.where(
        people.gender == 0,
        first_f + rng.integers(0, len(dicts.FIRST_NAMES_FEMALE), n),
        first_m + rng.integers(0, len(dicts.FIRST_NAMES_MALE), n),
    )
    last = pool.literals(list(dicts.LAST_NAMES)) + rng.integers(0, len(dicts.LAST_NAMES), n)
    gender = pool.literals(["female", "male"]) + people.gender
    days = rng.integers(-3653, 9496, n)  # birthdays 1960-01-01 … 1995-12-31
    birth = pa.array(days.astype(np.int32), pa.date32())
    birthday = pool.literals(birth.cast(pa.string()), XSD + "date")
    class_year = pool.literals(to_str(np.asarray(pc.year(birth)) + 22), XSD + "gYear")
    joined = terms.datetimes(-rng.integers(1, 3 * 365 * 24 * 3600 * 1000, n))
    per_city = p.universities_per_city
    uni_names = [
        pattern.format(c[1])
        for c in dicts.CITIES[: p.cities]
        for pattern in dicts.UNIVERSITY_PATTERNS[:per_city]
    ]
    university = pool.literals(uni_names) + people.university
    c = terms.const
    city = people.city
    lat = terms.doubles(terms.city_lat[city])
    lon = terms.doubles(terms.city_lon[city])
    person = terms.person + i
    user = terms.user + i
    persons = event_rows(
        zero,
        i,
        [
            (person, c(RDF_TYPE), c(FOAF + "Person")),
            (person, c(FOAF + "firstName"), first),
            (person, c(FOAF + "lastName"), last),
            (person, c(FOAF + "gender"), gender),
            (person, c(FOAF + "birthday"), birthday + i),
            (person, c(FOAF + "based_near"), terms.city_iri + city),
            (person, c(DBPPROP + "latd"), lat + i),
            (person, c(DBPPROP + "longd"), lon + i),
            (person, c(FOAF + "organization"), university),
            (person, c(SIBV + "class_year"), class_year + i),
        ],
    )
    users = event_rows(
        zero,
        i,
        [
            (user, c(RDF_TYPE), c(SIBV + "User")),
            (user, c(SIOC + "account_of"), person),
            (user, c(DC + "date"), joined + i),
            (user, c(SIOC + "moderator_of"), terms.forum + i),
            (user, c(SIOC + "subscriber_of"), terms.forum + i),
            (terms.forum + i, c(RDF_TYPE), c(SIOC + "Forum")),
            (user, c(SIOC + "creator_of"), terms.album + i),
            (terms.album + i, c(RDF_TYPE), c(SIOCT + "ImageGallery")),
        ],
    )
    owner = np.repeat(i, np.diff(people.interest_ptr))
    interests = child_rows(
        owner, owner, 0, terms.user + owner, c(SIBV + "interest"), terms.interest + people.interest
    )
    src = np.repeat(i, people.degree)
    knows = child_rows(src, src, 0, terms.user + src, c(FOAF + "knows"), terms.user + people.friend)
    return [persons, users, interests, knows]


# --- streams --------------------------------------------------------------------------------


def _post_streams(
    terms: _Terms,
    people: Population,
    activity: F64,
    likes: tuple[I64, I64, npt.NDArray[np.bool_]],
    rng: np.random.Generator,
) -> tuple[list[Rows], Rows]:
    p, c = terms.p, terms.const
    weeks = p.period_ms / WEEK_MS
    users = np.arange(p.users, dtype=np.int64)

    # Posts, ids in time order.
    author = np.repeat(users, _counts(rng, activity, p.max_posts_per_week, weeks))
    t = rng.integers(0, p.period_ms, len(author))
    order = _by_time(t, author)
    author, t = author[order], t[order]
    n_posts = len(t)
    pid = np.arange(n_posts, dtype=np.int64)
    friend_wall = pick(people.friend_ptr, people.friend, author, rng)
    wall = np.where((rng.random(n_posts) < 0.2) & (friend_wall >= 0), friend_wall, author)
    post = terms.iris(SIB + "post/po", pid)
    created = terms.datetimes(t)
    content = terms.sentence + rng.integers(0, SENTENCES, n_posts)
    posts = event_rows(
        t,
        pid,
        [
            (post + pid, c(RDF_TYPE), c(SIBV + "Post")),
            (post + pid, c(RDF_TYPE), c(SIOC + "Post")),
            (post + pid, c(DC + "created"), created + pid),
            (post + pid, c(SIOC + "content"), content),
            (terms.forum + wall, c(SIOC + "container_of"), post + pid),
            (terms.user + author, c(SIOC + "creator_of"), post + pid),
        ],
    )
    # Hashtags: 0–3 of the author's interests, each once, after the post's template rows.
    tagged = np.repeat(pid, rng.integers(0, MAX_HASHTAGS + 1, n_posts))
    n_int = len(dicts.INTERESTS)
    code = np.unique(
        tagged * n_int + pick(people.interest_ptr, people.interest, author[tagged], rng)
    )
    h_post, h_interest = code // n_int, code % n_int
    rank = np.arange(len(code)) - np.searchsorted(h_post, h_post)
    hashtags = child_rows(
        t[h_post], h_post, 6 + rank, post + h_post, c(SIBV + "hashtag"), terms.interest + h_interest
    )

    # Comments on a recent post of a friend (80 %) or of the commenter's own.
    commenter = np.repeat(users, _counts(rng, activity, p.max_comments_per_week, weeks))
    tc = rng.integers(0, p.period_ms, len(commenter))
    on = _on_friends_items(rng, p, people, author, t, commenter, tc, own_share=0.2)
    keep = on >= 0
    commenter, tc, on = commenter[keep], tc[keep], on[keep]
    order = _by_time(tc, commenter)
    commenter, tc, on = commenter[order], tc[order], on[order]
    cid = np.arange(len(tc), dtype=np.int64)
    comment = terms.iris(SIB + "post/comment/co", cid)
    c_created = terms.datetimes(tc)
    c_content = terms.sentence + rng.integers(0, SENTENCES, len(tc))
    comments = event_rows(
        tc,
        n_posts + cid,
        [
            (comment + cid, c(RDF_TYPE), c(SIBV + "Comment")),
            (comment + cid, c(DC + "created"), c_created + cid),
            (comment + cid, c(SIOC + "reply_of"), post + on),
            (comment + cid, c(SIOC + "content"), c_content),
            (post + on, c(SIOC + "container_of"), comment + cid),
            (terms.user + commenter, c(SIOC + "creator_of"), comment + cid),
        ],
    )
    return [posts, hashtags, comments], _likes(terms, people, likes, False, author, t, post, rng)


def _like_plan(
    p: SocialParams, activity: F64, rng: np.random.Generator
) -> tuple[I64, I64, npt.NDArray[np.bool_]]:
    """(user, time, on a photo?) of every like drawn: one budget per user, split between posts
    and photos with equal probability."""
    counts = _counts(rng, activity, p.max_likes_per_week, p.period_ms / WEEK_MS)
    liker = np.repeat(np.arange(p.users, dtype=np.int64), counts)
    return liker, rng.integers(0, p.period_ms, len(liker)), rng.random(len(liker)) < 0.5


def _likes(
    terms: _Terms,
    people: Population,
    plan: tuple[I64, I64, npt.NDArray[np.bool_]],
    photo: bool,
    owner: I64,
    t_item: I64,
    item: int,
    rng: np.random.Generator,
) -> Rows:
    """``sibu:uX sib:like item``: likes of the plan on a friend's recent item, each pair once."""
    p = terms.p
    mine = plan[2] == photo
    liker, t = plan[0][mine], plan[1][mine]
    on = _on_friends_items(rng, p, people, owner, t_item, liker, t, own_share=0.0)
    keep = on >= 0
    liker, t, on = liker[keep], t[keep], on[keep]
    order = _by_time(t, liker)
    liker, t, on = liker[order], t[order], on[order]
    _, first = np.unique(on * p.users + liker, return_index=True)  # earliest like of a pair
    first = np.sort(first)
    liker, t, on = liker[first], t[first], on[first]
    key = np.arange(len(t), dtype=np.int64)
    return event_rows(t, key, [(terms.user + liker, terms.const(SIBV + "like"), item + on)])


def _photo_streams(
    terms: _Terms,
    people: Population,
    activity: F64,
    likes: tuple[I64, I64, npt.NDArray[np.bool_]],
    rng: np.random.Generator,
) -> tuple[list[Rows], Rows]:
    p, c = terms.p, terms.const
    weeks = p.period_ms / WEEK_MS
    owner = np.repeat(
        np.arange(p.users, dtype=np.int64), _counts(rng, activity, p.max_photos_per_week, weeks)
    )
    t = rng.integers(0, p.period_ms, len(owner))
    order = _by_time(t, owner)
    owner, t = owner[order], t[order]
    n = len(t)
    k = np.arange(n, dtype=np.int64)
    photo = terms.iris(SIB + "photoalbum/photo/pho", k)
    city = people.city[owner]
    lat = terms.doubles(terms.city_lat[city] + rng.random(n) * 0.01)
    lon = terms.doubles(terms.city_lon[city] + rng.random(n) * 0.01)
    photos = event_rows(
        t,
        k,
        [
            (photo + k, c(RDF_TYPE), c(SIBV + "Photo")),
            (photo + k, c(DC + "created"), terms.datetimes(t) + k),
            (photo + k, c(DBPO + "location"), terms.city_label + city),
            (photo + k, c(DBPPROP + "latd"), lat + k),
            (photo + k, c(DBPPROP + "longd"), lon + k),
            (terms.album + owner, c(SIOC + "container_of"), photo + k),
        ],
    )
    tagged_photo = np.repeat(k, rng.integers(0, p.max_user_tags + 1, n))
    who = pick(people.friend_ptr, people.friend, owner[tagged_photo], rng)
    keep = who >= 0
    code = np.unique(tagged_photo[keep] * p.users + who[keep])
    tp, tu = code // p.users, code % p.users
    rank = np.arange(len(code)) - np.searchsorted(tp, tp)
    usertags = child_rows(t[tp], tp, 6 + rank, photo + tp, c(SIBV + "usertag"), terms.user + tu)
    return [photos, usertags], _likes(terms, people, likes, True, owner, t, photo, rng)


def _gps_stream(terms: _Terms, people: Population, activity: F64, rng: np.random.Generator) -> Rows:
    p, c = terms.p, terms.const
    weeks = p.period_ms / WEEK_MS
    sharing = rng.random(p.users) < p.gps_users
    sessions = _counts(rng, activity, p.max_gps_sessions_per_week, weeks) * sharing
    user = np.repeat(np.arange(p.users, dtype=np.int64), sessions)
    begin = rng.integers(0, p.period_ms, len(user))
    fixes = rng.integers(1, GPS_FIXES_PER_SESSION + 1, len(user))
    who = np.repeat(user, fixes)
    step = np.arange(len(who)) - np.repeat(np.cumsum(fixes) - fixes, fixes)
    t = np.repeat(begin, fixes) + step * GPS_FIX_INTERVAL_MS
    keep = t < p.period_ms
    who, t = who[keep], t[keep]
    order = _by_time(t, who)
    who, t = who[order], t[order]
    n = len(t)
    k = np.arange(n, dtype=np.int64)
    gps = terms.iris(SIB + "gps/gps", k)
    city = people.city[who]
    lat = terms.doubles(terms.city_lat[city] + rng.random(n) * 0.01)
    lon = terms.doubles(terms.city_lon[city] + rng.random(n) * 0.01)
    return event_rows(
        t,
        k,
        [
            (terms.user + who, c(SIBV + "trackedAt"), gps + k),
            (gps + k, c(DBPPROP + "latd"), lat + k),
            (gps + k, c(DBPPROP + "longd"), lon + k),
            (gps + k, c(SIBV + "trackedTime"), terms.datetimes(t) + k),
            (gps + k, c(SIBV + "trackedLocation"), terms.city_label + city),
        ],
    )
