"""Shared fixtures, and the property tests' settings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings

# No per-example deadline: the suite runs on shared two-core machines, where one example
# can take seconds while another job runs; a property's examples still run as configured.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded random generator, fresh per test."""
    return np.random.default_rng(1234)
