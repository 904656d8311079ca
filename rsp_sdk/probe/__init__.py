"""Engine fingerprinting: short probe streams whose outputs reveal an engine's SECRET
operational semantics (report policy, tick, window bounds, t0, R2S, empty relations, time unit,
clock), inferred from outputs alone and compared with what its adapter declares."""

from rsp_sdk.probe.driver import Observation, ProbeSettings, Relation, run_probe
from rsp_sdk.probe.export import inferred_profile, profile_toml, write_profile
from rsp_sdk.probe.model import FieldName, Finding, Fingerprint
from rsp_sdk.probe.run import probe_engine

__all__ = [
    "FieldName",
    "Finding",
    "Fingerprint",
    "Observation",
    "ProbeSettings",
    "Relation",
    "inferred_profile",
    "probe_engine",
    "profile_toml",
    "run_probe",
    "write_profile",
]
