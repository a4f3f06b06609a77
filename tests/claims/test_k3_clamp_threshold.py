"""Claim 12 (issue 17): the crosswalk's example of where k3's value clamp bites.

``value_clamp_dead`` said "a token's k3 > 10, e.g. π_θ(x) < 0.08·π_ref(x)";
at π_θ = 0.075·π_ref, k3 is 9.74 and nothing is clamped.  The threshold is
π_ref/13.61 = 0.0735·π_ref (e^t − 1 − t = 10 at t = log π_ref/π_θ = 2.6109).
The crosswalk's prose cannot compute numbers, so the typed number is checked
here: every π_θ below it is clamped (the "e.g." holds), and it is within 1%
of the threshold, in English and in Chinese.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.optimize import brentq

import i18n
from kl_core.libraries.crosswalk import evaluate, libraries, options

PATTERN = re.compile(r"k3 > (\d+(?:\.\d+)?)，?,? ?(?:e\.g\.|例如) π_θ\(x\) < ([\d.]+)·π_ref\(x\)")
USERS = [e for lib in libraries() for e in options(lib) if "k3 > 10, e.g." in str(e.caveat)]


def _threshold(level: float) -> float:
    """π_θ/π_ref below which k3 (t = log π_ref − log π_θ) exceeds ``level``."""
    t = brentq(lambda t: math.expm1(t) - t - level, 0.0, 50.0, xtol=1e-15, rtol=1e-15)
    return math.exp(-t)


def test_the_threshold():
    c = _threshold(10.0)
    assert c == pytest.approx(1 / 13.6109, rel=1e-5) and c == pytest.approx(0.07347, abs=1e-5)
    t = math.log(1 / 0.075)
    assert math.expm1(t) - t == pytest.approx(9.74, abs=0.005)   # the old 0.08 example's neighbour: no clamp


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("e", USERS, ids=[f"{e.library}:{e.option}:{e.acts_on}" for e in USERS])
def test_the_typed_example_is_below_the_computed_threshold(e, lang):
    assert USERS
    with i18n.using(lang):
        text = i18n.message(e.caveat)
    m = PATTERN.search(text)
    assert m is not None, text
    level, typed = float(m.group(1)), float(m.group(2))
    assert e.estimator == "k3" and e.value_clamp is not None and e.value_clamp[1] == level
    c = _threshold(level)
    assert typed <= c                                  # every π_θ < typed·π_ref is clamped: "e.g." holds
    assert typed >= 0.99 * c                           # and the example is the threshold to 2 digits
    # the library's own value at π_θ just below typed·π_ref is clamped to the level
    logp_ref = np.log([0.5])
    logp_theta = logp_ref + np.log(typed * (1 - 1e-9))
    sampler_is_theta = "π_θ" in e.sampler or "student" in e.sampler or "π_old" in e.sampler
    assert sampler_is_theta
    assert float(evaluate(e, logp_theta, logp_ref)[0]) == level
