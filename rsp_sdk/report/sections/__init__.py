"""The report's sections, one module each; ``SECTIONS`` is the page in order."""

from __future__ import annotations

from rsp_sdk.report.section import Section
from rsp_sdk.report.sections.across import AcrossEngines
from rsp_sdk.report.sections.config import Configuration
from rsp_sdk.report.sections.coverage import FeatureCoverage
from rsp_sdk.report.sections.details import CellDetails
from rsp_sdk.report.sections.mismatch import Mismatch
from rsp_sdk.report.sections.overview import Overview
from rsp_sdk.report.sections.verdicts import VerdictGrid

SECTIONS: tuple[Section, ...] = tuple(
    sorted(
        (
            Overview(),
            VerdictGrid(),
            AcrossEngines(),
            Mismatch(),
            FeatureCoverage(),
            CellDetails(),
            Configuration(),
        ),
        key=lambda s: s.order,
    )
)
