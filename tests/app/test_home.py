"""AppTest checks of the Home page: it runs, it reruns, and its numbers are the core's."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.montecarlo import simulate
from lab.format import share

APP = str(Path(__file__).resolve().parents[2] / "app.py")
KEYS = ("k1", "k2", "k3")
N, SEED = 20_000, 0


def run_home(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    return at.run()


def numbers(at: AppTest):
    """The Home page's table of estimator numbers, indexed by estimator name."""
    (table,) = at.dataframe
    return table.value.set_index("estimator")


def expected(mu: float):
    sim = simulate("normal(0,1)", f"normal({mu},1)", N, seed=SEED, keys=KEYS, sample_size=N)
    return sim, kl(Gaussian(0, 1), Gaussian(mu, 1))


def test_default_run_has_no_exception_and_shows_the_core_numbers():
    at = run_home()
    assert not at.exception
    assert at.title[0].value == "KL Estimator Lab"
    assert at.slider(key="mu").value == 0.5
    sim, true_kl = expected(0.5)
    assert true_kl == 0.125
    (exact_metric,) = at.metric
    assert exact_metric.value == f"{true_kl:.4g}"
    table = numbers(at)
    for key in KEYS:
        row = table.loc[key]
        assert row["mean of 20,000 values"] == sim[key].mean
        assert row["share of values < 0"] == share(sim[key].neg_fraction)  # text: lab.format.printf_text_column
        assert row["exact KL[q‖p]"] == true_kl
        m = estimator_moments(key, Gaussian(0, 1), Gaussian(0.5, 1))
        assert row["exact mean"] == m.mean
        assert row["per-sample std (exact)"] == pytest.approx(math.sqrt(m.var), rel=1e-12)
    # k1 really is negative on a large share of samples, k2 and k3 never are
    assert float(table.loc["k1", "share of values < 0"].rstrip("%")) > 30
    assert table.loc["k2", "share of values < 0"] == "0.0%"
    assert table.loc["k3", "share of values < 0"] == "0.0%"
    assert len(at.get("vega_lite_chart")) == 3


def test_moving_the_slider_reruns_and_updates_the_numbers():
    at = run_home()
    at.slider(key="mu").set_value(1.0).run()
    assert not at.exception
    sim, true_kl = expected(1.0)
    assert at.metric[0].value == "0.5"
    table = numbers(at)
    for key in KEYS:
        assert table.loc[key, "mean of 20,000 values"] == sim[key].mean
    # The URL itself is rewritten by the browser, not the server, so the
    # shared-link round trip is checked in tests/browser/test_navigation.py.


@pytest.mark.parametrize("mu", [0.0, 0.05, 1.5, 3.0])
def test_every_slider_position_runs_cleanly(mu):
    at = run_home()
    at.slider(key="mu").set_value(mu).run()
    assert not at.exception
    assert not at.error
    assert at.metric[0].value == f"{kl(Gaussian(0, 1), Gaussian(mu, 1)):.4g}"


def test_a_link_sets_the_slider():
    at = run_home(mu="1")
    assert not at.exception
    assert at.slider(key="mu").value == 1.0
    assert at.metric[0].value == "0.5"
    assert not at.warning


@pytest.mark.parametrize("bad", ["abc", "9", "-1", "nan", ""])
def test_a_bad_link_value_falls_back_with_a_visible_note(bad):
    at = run_home(mu=bad)
    assert not at.exception
    assert at.slider(key="mu").value == 0.5
    if bad:  # an empty ?mu= is simply "not set"
        assert any("mu=" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.metric[0].value == "0.125"


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_kl_that_rounds_to_zero_is_not_called_p_equal_q():
    """?mu=1e-200: KL 0.0, but k1 = −μx is not 0 (the captions said "With p = q … every value is 0")."""
    at = run_home(mu="1e-200")
    assert not at.exception
    assert at.slider(key="mu").value == 1e-200 and at.metric[0].value == "0"
    text = _markdown(at)
    assert "With p = q" not in text and "the values are not all 0" in text


def test_k2s_caption_at_a_tiny_bias_says_the_digits_agree():
    """?mu=0.005: it said "its exact mean is 1.25e-05, not 1.25e-05: biased by +0.0%"."""
    at = run_home(mu="0.005")
    assert not at.exception
    text = _markdown(at)
    assert "not 1.25e-05" not in text and "+0.0%" not in text
    assert "agrees with the KL, 1.25e-05, to the digits shown, but is biased by +0.00062%" in text


def test_a_linked_value_between_the_steps_is_shown_as_it_is():
    """?mu=0.005 on the 0.05-step slider: the page computes with 0.005 (KL 1.25e-05), and the slider printed
    "0.01" with its fixed two decimals; a value on the grid keeps them."""
    at = run_home(mu="0.005")
    slider = at.slider(key="mu")
    assert slider.value == 0.005 and slider.proto.format == "%g"
    assert at.metric[0].value == "1.25e-05"
    assert run_home(mu="0.55").slider(key="mu").proto.format == "%.2f"
    assert run_home().slider(key="mu").proto.format == "%.2f"
