"""kl_core.estimation.published: a printed number keeps its precision."""

from __future__ import annotations

import pytest

from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.published import SCHULMAN_2020, Printed, match_published


@pytest.mark.parametrize(
    ("text", "value", "decimals", "rounding"),
    [("1.42", 1.42, 2, 0.005), ("1.7", 1.7, 1, 0.05), ("20", 20.0, 0, 0.5), ("0.002", 0.002, 3, 0.0005),
     ("1.70", 1.7, 2, 0.005)],
)
def test_a_printed_number_knows_its_last_place(text, value, decimals, rounding):
    n = Printed(text)
    assert (n.text, str(n), n.decimals) == (text, text, decimals)
    assert n.value == pytest.approx(value, rel=1e-15)
    assert n.rounding == pytest.approx(rounding, rel=1e-12)


@pytest.mark.parametrize("text", ["", "one", "nan", "inf", "1.2.3"])
def test_a_printed_number_must_be_a_finite_number(text):
    with pytest.raises(ValueError, match="text"):
        Printed(text)


def test_rows_are_found_by_estimator_and_experiments_by_their_pair():
    exp = match_published(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    assert exp is SCHULMAN_2020[1] and exp.row("k3").std == Printed("1.7")
    assert exp.row("k_lambda") is None
    assert match_published(Gaussian(0.0, 1.0), Gaussian(0.5, 1.0)) is None
