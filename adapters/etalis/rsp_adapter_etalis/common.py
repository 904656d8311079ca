"""What the ``etalis`` and ``jtalis`` adapters share: both run ETALIS' EP-SPARQL with the same
rules (``prolog/rsp_ep_sparql.pl``), so they share its profile, its capabilities and the
renderer (``render.py``); only the way events reach ETALIS differs (a Python shim over a pipe,
or JTALIS' Java API over InterProlog). The ``jtalis`` adapter imports this module.
"""

from __future__ import annotations

from pathlib import Path

from rsp_sdk.engine import Capabilities, Feature
from rsp_sdk.model.profile import load_profile

PROLOG_DIR = Path(__file__).resolve().parent / "prolog"
"""The shared Prolog (``rsp_ep_sparql.pl``); the jtalis driver gets it on its classpath."""

# ETALIS derives a complex event the moment its last input event arrives (eager, tuple-driven)
# and reports each derivation once: a report holds the solutions completed by one input event.
# Nothing is reported when nothing completes, and time alone never triggers anything.
# That is the built-in ``jtalis`` profile (rsp profiles show jtalis), the one the oracle knows.
PROFILE = load_profile("jtalis")

# What the EP-SPARQL rendering of RSP-QL can carry, established by running ETALIS (see
# docs/engines/etalis.md): joins (AND), numeric FILTERs with &&, UNION of single patterns (OR),
# static data (as Prolog facts in the FILTER), one window (WITHIN).
CAPABILITIES = Capabilities.of(
    Feature.JOIN,
    Feature.FILTER,
    Feature.UNION,
    Feature.STATIC_DATA,
    Feature.RSTREAM,
    Feature.APP_TIME_INPUT,
)

EP_SPARQL = Path("src") / "ep_sparql" / "ep_sparql.P"
