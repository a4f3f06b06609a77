"""Claim 18 (issue 17): the relative error of the sample variance, and of the sample SD.

The Estimator lab's warning said "N draws estimate its spread with a relative
error of about √((κ−1)/N)": that is the sample *variance*'s relative standard
error; the sample SD's is about half, √((κ−1)/(4N)) (delta method).  The
warning now names the variance's.  It gives no figure for the SD: the warning
shows only where N < 2(κ − 1), and there the delta method fails (it gave 3.06
on the Laplace preset, yet s/σ has E[(s/σ − 1)²] = 2 − 2E[s/σ] ≤ 2, so the SD's
relative error is at most √2; simulated, 0.64).  Checked: the number in every
warning the page shows over its presets and N, against κ; and the two formulas
by simulation where the delta method holds (seeded, tolerances from the runs'
standard errors).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from kl_core.estimation.distributions import parse
from kl_core.estimation.estimators import ESTIMATORS, evaluate
from kl_core.estimation.montecarlo import simulate
from kl_core.estimation.presets import PRESETS
from kl_core.estimation.reliability import error_bar_check
from lab.notes import estimator_lab as notes

KEYS = ("k1", "k2", "k3", "k3_pq")
NS = (10, 100, 1000)
SHOWN = re.compile(r"Its kurtosis is (\S+), so N draws estimate its variance with a relative standard error of "
                   r"about (\S+); a trustworthy")


def _warnings(preset, n):
    q, p = parse(preset.q_spec), parse(preset.p_spec)
    checks = {k: error_bar_check(k, q, p, n) for k in KEYS}
    sim = simulate(q, p, n, repeats=1, seed=0, keys=KEYS)
    return checks, notes.error_bar_notes(checks, {k: sim[k] for k in KEYS})


def test_every_warning_on_the_presets_gives_the_variances_relative_error_and_no_sds():
    seen = 0
    for preset in PRESETS.values():
        for n in NS:
            checks, shown = _warnings(preset, n)
            for note in shown:
                assert "estimate its spread with" not in note.text
                name = re.search(r"The ±SE of (.+?) can't be trusted", note.text).group(1)
                (check,) = [c for k, c in checks.items() if ESTIMATORS[k].name == name]
                m = SHOWN.search(note.text)
                if math.isinf(check.kurtosis):
                    assert m is None
                    continue
                assert m is not None, note.text
                seen += 1
                var_rel = math.sqrt(check.kurtosis / n - (n - 3) / (n * (n - 1)))  # exact (Cramér 27.4)
                assert float(m.group(2)) == pytest.approx(var_rel, rel=5e-4)
                assert "its SD with" not in note.text and (check.kurtosis - 1) / n > 0.5  # where the delta method fails
    assert seen >= 1


@pytest.mark.parametrize(("p_spec", "key"), [("normal(0.5,1)", "k1"), ("normal(0.5,1)", "k3")])
def test_the_two_formulas_by_simulation(p_spec, key):
    q, p = parse("normal(0,1)"), parse(p_spec)
    n, runs = 2000, 2000
    check = error_bar_check(key, q, p, n)
    rng = np.random.default_rng(20261202)
    x = rng.standard_normal((runs, n))
    values = evaluate(key, p.logpdf(x) - q.logpdf(x))
    var = values.var(axis=1, ddof=1)
    sd = np.sqrt(var)
    rel_var = var.std(ddof=1) / check.exact_sd**2
    rel_sd = sd.std(ddof=1) / check.exact_sd
    # each is itself estimated from `runs` runs: its relative SE is about √((κ_v − 1)/(4·runs)) ≤ 5% here
    assert rel_var == pytest.approx(check.var_relative_se, rel=0.08)
    assert rel_sd == pytest.approx(check.sd_relative_se, rel=0.08)
    exact = math.sqrt(check.kurtosis / n - (n - 3) / (n * (n - 1)))  # the sample variance's, exactly
    assert check.sd_relative_se == pytest.approx(0.5 * exact, rel=1e-12)
    assert exact == pytest.approx(math.sqrt((check.kurtosis - 1) / n), rel=1e-3)  # the large-N form, at N = 2000
