"""The lab's practical parameter range: outside it, a clear message instead of a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kl_core.estimation.distributions import parse, practical_issue

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("normal(0,1e-300)", "sigma"),
        ("normal(1e300,1)", "mu"),
        ("laplace(0,1e9)", "scale"),
        ("t(0.01,0,1)", "df"),
        ("mixture(0.5:0:1,0.5:2e6:1)", "means"),
        ("categorical(0,-1e6)", "logits"),
    ],
)
def test_extreme_parameters_are_named(spec, names):
    issue = practical_issue(parse(spec))
    assert issue.startswith(names)


@pytest.mark.parametrize(
    "spec",
    ["normal(0,1e-6)", "normal(1e6,1)", "t(0.1,0,1)", "laplace(0,1e6)", "categorical(0,-1e4)"],
)
def test_the_edges_of_the_range_are_accepted(spec):
    assert practical_issue(parse(spec)) == ""


@pytest.mark.parametrize("page", ["pages/estimator-lab.py", "pages/control-variates.py", "pages/bregman-gap.py"])
@pytest.mark.parametrize(("q", "p"), [("normal(0,1e-300)", "normal(0,1)"), ("normal(0,1)", "normal(1e300,1)")])
def test_pages_explain_extreme_settings(page, q, p):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(page)
    at.query_params.update({"q": q, "p": p})
    at.run()
    assert not at.exception
    assert any("double precision" in e.value for e in at.error)
