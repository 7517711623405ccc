"""Settings of the privacy audit: ``--audit-strong`` (or ``SYNTH_AUDIT_STRONG=1`` in the
environment, which also works for a whole-suite run) audits every case with many more runs,
including the slow ones that the default run skips."""

from __future__ import annotations

import os

import pytest

STRONG_VARIABLE = "SYNTH_AUDIT_STRONG"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--audit-strong", action="store_true", default=False,
                     help=f"privacy audit: many more runs per case, and the slow cases (also: {STRONG_VARIABLE}=1)")


@pytest.fixture(scope="session")
def audit_strong(request: pytest.FixtureRequest) -> bool:
    """Whether this is the strong audit."""
    return bool(request.config.getoption("--audit-strong", default=False)) or os.environ.get(STRONG_VARIABLE) == "1"
