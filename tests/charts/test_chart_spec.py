"""``lab.ui`` builds chart specs without Altair's slow ``to_dict``: prove it changes nothing.

Every chart that every page draws (at its defaults and at a few links that
switch on other charts) goes through both paths: the fast one the app uses
and Altair's own ``to_dict`` (with the datasets written inline the same
way).  The two JSON documents must be identical.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lab import ui
from lab.pages import PAGES

APP = str(Path(__file__).resolve().parents[2] / "app.py")

LINKS = [(page.path, {}) for page in PAGES] + [
    ("pages/estimator-lab.py", {"keys": ["k1", "k2", "k3", "k_lambda", "k3_pq"]}),
    ("pages/estimator-lab.py", {"q": "categorical(2,1,0.5,0,-1)", "p": "categorical(1.6,1.2,0.7,0.2,-0.6)"}),
    ("pages/sequences.py", {"src": "rb counterexample"}),
    ("pages/sequences.py", {"src": "drift", "K": "40", "first": "true", "T": "256"}),
    ("pages/gradients.py", {"k": "9", "t": "2.5", "smp": "old", "option": "OpenRLHF:k3:reward"}),
]


def _numbers(spec: dict) -> object:
    return json.loads(json.dumps(spec), parse_int=float)


def _reference(ch) -> dict:
    spec = ch.to_dict(validate=False)
    datasets = spec.pop("datasets", {})
    native = {name: [ui._native_row(r) for r in rows] for name, rows in datasets.items()}
    return ui._inline(spec, native)


@pytest.mark.parametrize(("path", "query"), LINKS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(LINKS)])
def test_fast_spec_equals_altairs(monkeypatch, path, query):
    fast = ui._spec
    checked = []

    def both(ch):
        got = fast(ch)
        want = _reference(ch)
        # Altair writes numpy integers as floats (0.0), we as ints (0): the same JSON number.
        assert _numbers(got) == _numbers(want)
        checked.append(1)
        return got

    monkeypatch.setattr(ui, "_spec", both)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    if path != PAGES[0].path:
        at.switch_page(path)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    assert checked, f"{path} drew no chart"
