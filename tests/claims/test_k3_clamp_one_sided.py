"""Claim 11 (issue 17): where a library's clamp bites, on each side of log r = 0.

The doctor's CLAMP_HIDES_DRIFT card said "bites once … |log r| > 2.61" and the
pull chart's caption "Past |t| = 2.61 the clamp bites".  k3's value clamp at
10 is one-sided in t = log π_ref − log π_θ: e^t − 1 − t = 10 at t ≈ 2.61 and,
on the other side, only at t ≈ −11.0.  Here every clamped crosswalk entry's
two sides are solved independently (scipy's brentq on the estimator's closed
form, and the log-ratio clamp's ends), checked on the values the library
computes (kl_core.libraries.crosswalk.evaluate), and every number in the sentences the
doctor shows is checked against those roots.
"""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import brentq

from kl_core.doctor.diagnosis import PULL_T_MAX, _clamp_words, clamp_bite, clamp_sides, diagnose
from kl_core.estimation import estimators
from kl_core.libraries.crosswalk import evaluate, libraries, options
from lab.notes import config_doctor as notes

CLOSED = {  # k(t), t = log r in the entry's convention
    "k1": lambda t: -t,
    "k2": lambda t: 0.5 * t * t,
    "k3": lambda t: math.expm1(t) - t,
}
CLAMPED = [e for lib in libraries() for e in options(lib)
           if (e.logr_clamp is not None or e.value_clamp is not None) and e.estimator != "full"]
IDS = [f"{e.library}:{e.option}:{e.acts_on}" for e in CLAMPED]


def _roots(e) -> tuple[float | None, float | None]:
    """The sides by brentq on the closed form, and the log-ratio clamp's ends."""
    below, above = [], []
    if e.logr_clamp is not None:
        lo, hi = e.logr_clamp
        below += [lo] if math.isfinite(lo) else []
        above += [hi] if math.isfinite(hi) else []
    if e.value_clamp is not None:
        k = CLOSED[e.estimator]
        for level in e.value_clamp:
            for side, far in ((above, 60.0), (below, -60.0)):
                f = lambda t, level=level: k(t) - level  # noqa: E731
                if np.sign(f(0.0)) != np.sign(f(far)):
                    side.append(brentq(f, 0.0, far, xtol=1e-14, rtol=1e-15))
    return (max(below) if below else None, min(above) if above else None)


def _value(e, t: float) -> float:
    return float(evaluate(e, np.array([-70.0]), np.array([-70.0 + t]))[0])


def test_the_k3_roots():
    e = next(e for e in CLAMPED if e.library == "verl" and e.option == "low_var_kl" and e.acts_on == "loss")
    below, above = _roots(e)
    assert above == pytest.approx(2.610868638, abs=1e-8)      # π_θ < π_ref/13.61 = 0.0735·π_ref
    assert below == pytest.approx(-10.99998330, abs=1e-7)     # π_θ > e^11·π_ref ≈ 59,873·π_ref
    assert math.exp(above) == pytest.approx(13.6109, abs=1e-4)
    assert math.exp(-below) == pytest.approx(59873.1, rel=1e-5)


@pytest.mark.parametrize("e", CLAMPED, ids=IDS)
def test_clamp_sides_are_the_roots_and_the_library_value_changes_there(e):
    below, above = clamp_sides(e)
    rb, ra = _roots(e)
    for got, want in ((below, rb), (above, ra)):
        assert (got is None) == (want is None)
        if want is not None:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert clamp_bite(e) == min(abs(t) for t in (below, above) if t is not None)
    # the value the library computes: unclamped strictly inside, changed just past each side
    inside = np.linspace(below if below is not None else -50.0, above if above is not None else 50.0, 203)[1:-1]
    for t in inside:
        assert _value(e, t) == pytest.approx(float(estimators.evaluate(e.estimator, t)), rel=1e-9, abs=1e-12)
    for t in (below, above):
        if t is not None and abs(t) < 50.0:
            past = t * (1 + 1e-6)
            assert _value(e, past) != pytest.approx(float(estimators.evaluate(e.estimator, past)), rel=1e-12)


#: "(π_θ(x) < π_ref(x)/13.6)" or "(π_θ(x) > 59,900·π_ref(x))"
WORDS = r"\(π_θ\(x\) (?:< π_ref\(x\)/([\d.,]+)|> ([\d.,]+)·π_ref\(x\))\)"


def _check_words(m: re.Match, t: float) -> None:
    """The probability ratio in words: π_θ below π_ref/e^t for t > 0, above e^−t·π_ref for t < 0."""
    below_ref, above_ref = m.group(2), m.group(3)
    assert (below_ref is not None) == (t > 0)
    ratio = float((below_ref or above_ref).replace(",", ""))
    assert ratio == pytest.approx(math.exp(abs(t)), rel=0.005)


def _check_sentence(e, text: str) -> None:
    below, above = _roots(e)
    sides = [t for t in (below, above) if t is not None]
    near, far = min(sides, key=abs), (max(sides, key=abs) if len(sides) == 2 else None)
    sym = re.search(r"passes ([\d.,]+) \(\|log r\| > ([\d.]+)\)", text)
    if far is not None and math.isclose(abs(far), abs(near), rel_tol=1e-9):
        assert sym is not None, text
        assert float(sym.group(2)) == pytest.approx(abs(near), abs=0.005)
        assert float(sym.group(1).replace(",", "")) == pytest.approx(math.exp(abs(near)), rel=0.005)
        return
    assert sym is None and "|log r|" not in text, text
    m = re.search(r"log r = log π_ref\(x\) − log π_θ\(x\) passes (−?[\d.]+) " + WORDS, text)
    assert m is not None, text
    assert float(m.group(1).replace("−", "-")) == pytest.approx(near, abs=0.005)
    _check_words(m, near)
    if far is None:
        assert "never the other way" in text
        return
    m = re.search(r"the other way only past log r = (−?[\d.]+) " + WORDS, text)
    assert m is not None, text
    assert float(m.group(1).replace("−", "-")) == pytest.approx(far, abs=0.005)
    _check_words(m, far)


@pytest.mark.parametrize("e", CLAMPED, ids=IDS)
def test_the_doctor_sentence_of_every_clamped_entry(e):
    _check_sentence(e, str(_clamp_words(SimpleNamespace(library=e.library), e)))


@pytest.mark.parametrize("key", ["verl", "openrlhf"])
def test_the_cards_of_the_pages_examples(key):
    """The verl GRPO example's card shows the warning and the pull caption: both true."""
    d = diagnose(notes.example_text(key), notes.EXAMPLES[key].library)
    warnings = [w for w in d.warnings if w.code == "CLAMP_HIDES_DRIFT"]
    assert warnings, key
    for w in warnings:
        e = d.kl_uses[w.kl_use].entry
        _check_sentence(e, str(w.message))
    for u in d.kl_uses:
        below, above = _roots(u.entry)
        cap = notes.pull_caption(u)
        if u.entry.estimator == "k3" and u.entry.grad_mode in ("autograd", "score", "score_current"):
            m = re.search(r"Past \$\\log r = ([\d.]+)\$ the clamp bites", cap)
            assert m is not None and float(m.group(1)) == pytest.approx(above, abs=0.005), cap
            assert "|\\log r|" not in cap
            m = re.search(r"On the other side it bites only below \$\\log r = (-[\d.]+)\$, off the chart", cap)
            assert m is not None and float(m.group(1)) == pytest.approx(below, abs=0.005), cap
            assert abs(below) >= PULL_T_MAX                       # off the chart indeed


@pytest.mark.parametrize("e", CLAMPED, ids=IDS)
def test_the_pull_caption_words_for_every_clamped_entry(e):
    below, above = _roots(e)
    cap = notes.clamp_words(*clamp_sides(e))
    on_chart = [t for t in (below, above) if t is not None and abs(t) < PULL_T_MAX]
    if not on_chart:
        assert cap == ""
        return
    numbers = [float(x) for x in re.findall(r"\\log r\|? = (-?[\d.]+)\$", cap)]
    if "|\\log r|" in cap:
        assert len(on_chart) == 2 and math.isclose(-on_chart[0], on_chart[1], rel_tol=1e-9)
        assert numbers == [pytest.approx(on_chart[1], abs=0.005)]
        return
    expected = on_chart + [t for t in (below, above) if t is not None and abs(t) >= PULL_T_MAX]
    assert numbers == [pytest.approx(t, abs=0.005) for t in expected]
    if len(on_chart) == 1 and len(expected) == 1:
        assert "never bites" in cap
