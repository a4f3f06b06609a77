"""The classroom benchmark's choices: which widget a student moves, and to what.

``next_value`` must give values a real widget accepts (on its step grid,
inside its range, integers for integer widgets) and different values for
different students, so the load is not one cached value asked thirty times.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # bench_classroom imports streamlit_client by name
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


client = _load("streamlit_client")
bench = _load("bench_classroom")


def widget(kind="slider", value=(0.5,), lo=0.0, hi=3.0, step=0.05, is_int=False):
    value = list(value) if kind == "slider" else value
    return client.Widget("id", kind, "k", value, value, lo, hi, step, is_int)


def test_slider_moves_stay_on_the_grid_in_range_and_differ():
    w = widget()  # Home's μ: 0 … 3 in steps of 0.05, shown at 0.5
    values = [client.next_value(w, t)[0] for t in range(1, 61)]
    assert len(set(values)) == 60  # each of the other grid points once (61 from 0 to 3)
    assert 0.5 not in values
    for v in values:
        assert 0.0 <= v <= 3.0
        assert abs(v / 0.05 - round(v / 0.05)) < 1e-9
    assert values[:2] == [0.55, 0.6] and values[50] == 0.45  # up to the top, then down
    assert client.next_value(w, 61) == client.next_value(w, 1)  # then round again


def test_integer_number_input_without_a_useful_maximum_counts_up_in_steps():
    w = widget("number_input", 1000.0, lo=10.0, hi=10_000_000.0, step=100.0, is_int=True)
    assert [client.next_value(w, t) for t in (1, 2, 3)] == [1100, 1200, 1300]
    assert all(float(client.next_value(w, t)).is_integer() for t in range(1, 20))
    unbounded = widget("number_input", 7.0, lo=None, hi=None, step=1.0, is_int=True)
    assert client.next_value(unbounded, 5) == 12


def test_a_range_slider_moves_its_upper_end_and_keeps_it_above_the_lower():
    w = widget(value=(-3.0, 3.0), lo=-3.0, hi=3.0, step=0.1)
    moved = [client.next_value(w, t) for t in range(1, 200)]
    assert all(lo == -3.0 and -3.0 < hi < 3.0 for lo, hi in moved)
    assert moved[0] == [-3.0, 2.9]


def test_next_value_rejects_t_below_one():
    with pytest.raises(ValueError, match="t must be"):
        client.next_value(widget(), 0)


def test_each_page_moves_its_own_key_else_seed_else_its_first_widget():
    assert bench.choose_key("", ["mu"]) == "mu"
    assert bench.choose_key("estimator-lab", ["q", "p", "n", "R", "seed"]) == "n"
    assert bench.choose_key("estimator-lab", ["R", "seed"]) == "seed"  # key renamed away
    assert bench.choose_key("new-page", ["x", "y"]) == "x"
    assert bench.choose_key("new-page", []) is None  # then the benchmark reruns unchanged


def test_percentiles_interpolate_between_runs():
    values = [float(v) for v in range(1, 101)]
    assert bench.percentile(values, 50) == pytest.approx(50.5)
    assert bench.percentile(values, 95) == pytest.approx(95.05)
    assert bench.percentile([], 50) is None and bench.percentile([2.0], 95) == 2.0
