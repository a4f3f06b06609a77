"""The normal mixture's refusals quote plain numbers: ``weights must be > 0, got -1.0``, never numpy's
``np.float64(-1.0)`` (the components pass through ``np.atleast_1d``)."""

from __future__ import annotations

import numpy as np
import pytest

from kl_core.cli import main as cli
from kl_core.estimation.distributions import parse
from kl_core.estimation.families.mixture import GaussianMixture
from kl_core.validation import InputError


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (((-1.0, 2.0), (0.0, 1.0), (1.0, 1.0)), "weights must be > 0, got -1.0"),
        (((0.5, 0.5), (0.0, 1.0), (1.0, -1.0)), "sigmas must be > 0, got -1.0"),
        (((0.5, 0.5), (0.0, 1.0), (0.0, 1.0)), "sigmas must be > 0, got 0.0"),
        (((0.5, 0.5), (0.0, np.inf), (1.0, 1.0)), "means must be finite, got inf"),
        ((np.array([-1.0, 2.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])), "weights must be > 0, got -1.0"),
    ],
)
def test_a_refusal_quotes_a_plain_number(args, message):
    with pytest.raises(InputError) as info:
        GaussianMixture(*args)
    assert str(info.value) == message and str(info.value.user) == message
    assert "np." not in repr(info.value.params)


def test_the_spec_and_the_command_line_quote_a_plain_number(capsys):
    with pytest.raises(ValueError, match=r"weights must be > 0, got -1\.0$"):
        parse("mixture(-1:0:1,2:1:1)")
    assert cli.main(["kl", "--q", "mixture(-1:0:1,2:1:1)"]) == 2
    _, err = capsys.readouterr()
    assert err == "error: --q: spec 'mixture(-1:0:1,2:1:1)': weights must be > 0, got -1.0\n"


def test_components_are_python_floats():
    d = GaussianMixture(np.array([0.25, 0.75]), np.array([0, 1]), np.array([1.0, 2.0]))
    assert d.weights == (0.25, 0.75) and d.means == (0.0, 1.0) and d.sigmas == (1.0, 2.0)
    assert all(type(v) is float for v in (*d.weights, *d.means, *d.sigmas))
    assert d.spec == "mixture(0.25:0:1,0.75:1:2)"
