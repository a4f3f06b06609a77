"""Charts kept across reruns: lab.cache.chart and the spec memo of lab.ui.chart."""

from __future__ import annotations

import gc
import json

import numpy as np

import i18n
from charts.histograms import per_sample_histogram
from lab import cache, ui


def _values() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(2000)


def test_cache_chart_returns_the_kept_chart_for_the_same_inputs_and_language():
    a = cache.chart(per_sample_histogram, _values(), "k1", true_value=0.1)
    b = cache.chart(per_sample_histogram, _values(), "k1", true_value=0.1)
    assert a is b
    assert cache.chart(per_sample_histogram, _values(), "k1", true_value=0.2) is not a
    with i18n.using("zh"):
        zh = cache.chart(per_sample_histogram, _values(), "k1", true_value=0.1)
    assert zh is not a
    assert json.dumps(zh.to_dict()) != json.dumps(a.to_dict())  # translated titles
    # The same chart the builder gives.
    fresh = per_sample_histogram(_values(), "k1", true_value=0.1)
    assert ui._spec(a) == ui._spec(fresh)


def test_the_spec_of_a_chart_is_built_once_while_the_chart_lives():
    ch = per_sample_histogram(_values(), "k3", true_value=0.1)
    first = ui._spec_once(ch)
    assert ui._spec_once(ch) is first
    assert first == ui._spec(ch)
    other = per_sample_histogram(_values(), "k3", true_value=0.3)
    assert ui._spec_once(other) is not first
    key = id(ch)
    del ch
    gc.collect()
    assert key not in ui._SPECS


def test_the_spec_memo_is_bounded():
    charts = [per_sample_histogram(_values(), "k1", true_value=0.01 * i) for i in range(ui._SPECS_MAX + 5)]
    for ch in charts:
        ui._spec_once(ch)
    assert len(ui._SPECS) <= ui._SPECS_MAX
    assert ui._spec_once(charts[-1]) is ui._spec_once(charts[-1])
