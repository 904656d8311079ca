"""The static side of the ``social`` generator: user profiles and a correlated friendship graph.

S2Gen (LSBench's generator, after the Social Intelligence Benchmark) makes friendships
*correlated*: it sorts users by one profile dimension at a time (location, then university, then
interests), slides a window over that order and befriends users who fall close together, so
friends tend to share a city, a university or an interest. We keep that idea in a form numpy can
run in one pass (a correlated configuration model):

1. every user draws a target degree from a truncated discrete power law (exponent ``gamma``,
   between ``min_friends`` and ``max_friends``) — heavy-tailed, unlike LSBench's 5–50 range, because
   real social graphs have hubs and streaming joins over ``foaf:knows`` are sensitive to them;
2. each of the user's degree "stubs" is assigned a dimension: same city with probability
   ``p_location``, same university ``p_university``, a shared interest ``p_interest``, and an
   uncorrelated random partner otherwise;
3. within each dimension the stubs are sorted by the owner's value in that dimension (for the
   interest dimension: one of the owner's interests, drawn per stub) with random tie-breaks, and
   consecutive stubs are paired — so, exactly as with S2Gen's window, a stub is paired with
   another stub of the same city/university/interest unless it sits at a group boundary;
4. self-pairs and duplicate pairs are dropped, which trims hub degrees a little.

The correlation probabilities are therefore the shares of friendships *drawn* along each
dimension; the observed share of, e.g., same-city friendships is that probability plus whatever the
other dimensions and chance contribute (universities are mostly in their student's city).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


def zipf_weights(n: int, s: float = 1.0) -> npt.NDArray[np.float64]:
    """Probabilities ∝ 1 / rank^s over n items (rank 1 first)."""
    w: npt.NDArray[np.float64] = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    out: npt.NDArray[np.float64] = w / w.sum()
    return out


def csr(n: int, owner: I64, value: I64) -> tuple[I64, I64]:
    """(ptr, values) with the values of owner i at values[ptr[i]:ptr[i+1]], in input order."""
    order = np.argsort(owner, kind="stable")
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
    return ptr, value[order].astype(np.int64)


def pick(ptr: I64, values: I64, owner: I64, rng: np.random.Generator) -> I64:
    """One uniformly random value of each owner's list, or -1 where the list is empty."""
    count = ptr[owner + 1] - ptr[owner]
    offset = np.floor(rng.random(len(owner)) * count).astype(np.int64)
    found = count > 0
    out = np.full(len(owner), -1, np.int64)
    out[found] = values[ptr[owner[found]] + offset[found]]
    return out


@dataclass(frozen=True)
class Population:
    """Profiles and friendships of ``n`` users, as arrays indexed by user id."""

    city: I64
    university: I64  # global id: home city × universities per city + rank in that city
    gender: I64  # 0 female, 1 male
    interest_ptr: I64
    interest: I64
    friend_ptr: I64
    friend: I64  # symmetric: b in friends(a) iff a in friends(b)

    @property
    def n(self) -> int:
        return len(self.city)

    @property
    def degree(self) -> I64:
        return np.diff(self.friend_ptr)


def profiles(
    rng: np.random.Generator,
    users: int,
    cities: int,
    universities_per_city: int,
    interests: int,
    max_interests: int,
    p_study_elsewhere: float = 0.05,
) -> tuple[I64, I64, I64, I64, I64]:
    """(city, university, gender, interest_ptr, interest) for every user.

    Users spread over cities by a Zipf law (big cities first); 95 % study in their own city,
    preferring its first universities; interests follow a Zipf law over a per-city ranking of the
    interest dictionary, so people of one city share tastes (S2Gen's location-dependent interests).
    """
    city = rng.choice(cities, size=users, p=zipf_weights(cities))
    home = np.where(rng.random(users) < p_study_elsewhere, rng.integers(0, cities, users), city)
    rank = rng.choice(universities_per_city, size=users, p=zipf_weights(universities_per_city))
    university = home * universities_per_city + rank
    gender = rng.integers(0, 2, users)
    ranking = rng.permuted(np.tile(np.arange(interests), (cities, 1)), axis=1)
    count = rng.integers(1, max_interests + 1, users)
    owner = np.repeat(np.arange(users, dtype=np.int64), count)
    chosen = ranking[city[owner], rng.choice(interests, size=len(owner), p=zipf_weights(interests))]
    code = np.unique(owner * interests + chosen)  # drop repeated draws; sorted by owner
    interest_ptr, interest = csr(users, code // interests, code % interests)
    return (
        city.astype(np.int64),
        university.astype(np.int64),
        gender.astype(np.int64),
        interest_ptr,
        interest,
    )


def target_degrees(
    rng: np.random.Generator, users: int, min_friends: int, max_friends: int, gamma: float
) -> I64:
    """Discrete power law P(d) ∝ d^-gamma on [min_friends, max_friends] (inverse transform)."""
    top = min(max_friends, users - 1)
    d = np.floor(min_friends * (1.0 - rng.random(users)) ** (-1.0 / (gamma - 1.0)))
    return np.clip(d, min(min_friends, top), top).astype(np.int64)


def friendships(
    rng: np.random.Generator,
    degree: I64,
    city: I64,
    university: I64,
    interest_ptr: I64,
    interest: I64,
    p_location: float,
    p_university: float,
    p_interest: float,
) -> tuple[I64, I64]:
    """Correlated friendship edges (a < b, unique) — see the module docstring."""
    n = len(degree)
    owner = np.repeat(np.arange(n, dtype=np.int64), degree)
    p_random = max(0.0, 1.0 - p_location - p_university - p_interest)
    probs = np.array([p_location, p_university, p_interest, p_random])
    dim = rng.choice(4, size=len(owner), p=probs / probs.sum())
    key = np.zeros(len(owner), np.int64)
    for d, values in ((0, city), (1, university)):
        sel = dim == d
        key[sel] = values[owner[sel]]
    sel = dim == 2
    key[sel] = pick(interest_ptr, interest, owner[sel], rng)
    order = np.lexsort((rng.random(len(owner)), key, dim))
    a_all, d_sorted = owner[order], dim[order]
    # Pair stub 2m with 2m + 1 within each dimension's run of the sorted order.
    start = np.searchsorted(d_sorted, d_sorted, side="left")
    first = np.flatnonzero((np.arange(len(a_all)) - start) % 2 == 0)
    first = first[first + 1 < len(a_all)]
    first = first[d_sorted[first + 1] == d_sorted[first]]
    a, b = a_all[first], a_all[first + 1]
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    code = np.unique(lo * n + hi)
    return code // n, code % n


def population(
    rng: np.random.Generator,
    *,
    users: int,
    cities: int,
    universities_per_city: int,
    interests: int,
    max_interests: int,
    min_friends: int,
    max_friends: int,
    gamma: float,
    p_location: float,
    p_university: float,
    p_interest: float,
) -> Population:
    """Profiles, then target degrees, then correlated friendships, from one generator."""
    city, university, gender, interest_ptr, interest = profiles(
        rng, users, cities, universities_per_city, interests, max_interests
    )
    degree = target_degrees(rng, users, min_friends, max_friends, gamma)
    a, b = friendships(
        rng, degree, city, university, interest_ptr, interest, p_location, p_university, p_interest
    )
    friend_ptr, friend = csr(users, np.concatenate([a, b]), np.concatenate([b, a]))
    # Within each user's list, friends in increasing id order (deterministic and readable).
    friend = _sort_within(friend_ptr, friend)
    return Population(city, university, gender, interest_ptr, interest, friend_ptr, friend)


def _sort_within(ptr: I64, values: I64) -> I64:
    owner = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    return values[np.lexsort((values, owner))]
