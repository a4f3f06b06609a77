"""lab.cache.cached: a spinner text in the run's language, one cache shared by the languages."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import i18n
from i18n import N_
from lab import cache

CALLS: list[int] = []


@cache.cached(N_("Drawing samples…"), max_entries=4)
def _square(x: int) -> int:
    CALLS.append(x)
    return x * x


def test_languages_share_one_cache():
    _square.clear()
    CALLS.clear()
    with i18n.using("en"):
        assert _square(3) == 9
    with i18n.using("zh"):
        assert _square(3) == 9
        assert _square(4) == 16
    with i18n.using("en"):
        assert _square(4) == 16
    assert CALLS == [3, 4]  # computed once per argument, whatever the language


def test_spinner_text_is_translated_per_language():
    texts = _square.spinner_texts
    assert set(texts) == set(i18n.LANGUAGES)
    assert texts["en"] == "Drawing samples…"
    assert texts["zh"] != texts["en"] and texts["zh"].strip()


def _cached_wrappers():
    return [(name, f) for name, f in inspect.getmembers(cache, callable)
            if hasattr(f, "spinner_texts")]


def test_the_slow_core_calls_have_a_spinner():
    names = {name for name, _ in _cached_wrappers()}
    for name in ("simulate", "estimator_moments", "lambda_parabola", "fisher_curve", "clamp_curve",
                 "audit_file", "sequence_curves", "sequence_sample", "gradient_table",
                 "training_runs", "diagnose"):
        assert name in names, name


@pytest.mark.parametrize("name", [name for name, _ in _cached_wrappers()])
def test_every_spinner_text_is_a_sentence_in_both_languages(name):
    texts = getattr(cache, name).spinner_texts
    assert texts["en"].endswith("…"), texts
    assert texts["zh"] != texts["en"], f"{name}: no Chinese spinner text"


def test_the_run_spinner_floats_over_the_page():
    # app.py runs every page inside ui.run_status().spinner(...): the box must not take room
    # in the page (a slider being dragged must not jump when it appears).
    from lab import ui

    assert "div:has(> .st-key-klrunstatus){position:fixed;" in ui.PAGE_CSS
    app = Path(ui.__file__).resolve().parents[1] / "app.py"
    assert "run_status().spinner(" in app.read_text()


def test_app_runs_with_the_run_spinner():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app.py", default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception
