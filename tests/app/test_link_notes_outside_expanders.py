"""A link value that a widget in a closed "More settings" expander cannot use is noted outside it.

Found by opening links in a fresh browser: ``/gradients?k=100`` showed K = 6 with its note hidden in
the closed expander, so the value seemed dropped without a word (likewise ``smp=bogus``, the audit's
``sc=`` and ``dir=``, the sequences' ``n=3`` and a lesson's ``v=-1``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def _open(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(page)
    at.query_params.update(query)
    return at.run()


def _link_notes(elements) -> list[str]:
    return [w.value for w in elements if "which this page can't use" in w.value]


@pytest.mark.parametrize(("page", "query", "given"), [
    ("pages/gradients.py", {"k": "100"}, "`k=100`"),
    ("pages/gradients.py", {"smp": "bogus"}, "`smp=bogus`"),
    ("pages/sequences.py", {"n": "3"}, "`n=3`"),
    ("pages/lessons.py", {"v": "-1"}, "`v=-1`"),
])
def test_the_note_is_outside_the_expander(page, query, given):
    at = _open(page, **query)
    assert not at.exception
    inside = [w for e in at.expander for w in _link_notes(e.warning)]
    everywhere = _link_notes(at.warning)
    assert inside == [], inside
    assert len(everywhere) == 1 and given in everywhere[0]


def test_a_range_slider_link_with_one_value_is_told_it_needs_two():
    # ?th_shift=1 said "(a number from -3 to 3)", yet 1 is one: a range slider takes its two ends
    at = _open("pages/f-divergences.py", th_shift="1")
    (note,) = _link_notes(at.warning)
    assert "(two numbers from -3 to 3, its two ends)" in note and "showing **-3, 3** instead" in note


@pytest.mark.parametrize(("page", "key", "values", "shown"), [
    ("pages/estimator-lab.py", "q", ["normal(0,1)", "laplace(0,1)"], "laplace(0,1)"),
    ("pages/control-variates.py", "lam", ["0.5", "2"], "0.5"),
])
def test_a_key_given_twice_is_noted_with_the_value_shown(page, key, values, shown):
    # q=normal(0,1)&q=laplace(0,1) opened Laplace without a word; lam=0.5&lam=2 said 2 was out of -1 to 3
    at = _open(page, **{key: values})
    assert not at.exception
    (note,) = [w.value for w in at.warning if "The link set" in w.value]
    assert note == (f"The link set `{key}={values[0]}&{key}={values[1]}`: {key} takes one value, and this page "
                    f"shows **{shown}**.")
