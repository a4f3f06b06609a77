"""The point first (issue 20): at 1280×800 a page's first chart starts on its first screen,
and its answer sentence (``lab.ui.answer``) comes before that chart.

Home is the model (its point is in the histograms' captions, so it has no separate
answer).  A page joins :data:`ANSWERED` once it opens with its answer.
"""

from __future__ import annotations

import pytest

from lab.ui import ANSWER_KEY
from tests.browser.checks import Preloads
from tests.browser.conftest import wait_until_settled

#: url path -> True if the page opens with a ``lab.ui.answer`` sentence.
ANSWERED = {
    "": False, "bregman-gap": True, "control-variates": True, "estimator-lab": True,
    "gradients": True, "sequences": True, "approx-kl": True, "f-divergences": True, "lessons": True,
}

POSITIONS = f"""() => {{
    const main = document.querySelector("[data-testid='stMain']");
    const top = main.getBoundingClientRect().top;
    const chart = main.querySelector("[data-testid='stVegaLiteChart']");
    const answer = main.querySelector(".st-key-{ANSWER_KEY}");
    return {{
        chart: chart ? chart.getBoundingClientRect().top - top : null,
        answer: answer ? answer.getBoundingClientRect().top - top : null,
        answerText: answer ? answer.innerText : "",
        height: window.innerHeight,
    }};
}}"""


#: One language per page, alternating (the layout is the same; the text's length differs):
#: every page is checked once, and each language on about half of them.
CASES = [pytest.param(path, ("en", "zh")[i % 2], id=f"{path or 'home'}-{('en', 'zh')[i % 2]}")
         for i, path in enumerate(ANSWERED)]


@pytest.fixture(scope="module")
def loads(chromium):
    """The pages, 1280×800: the next case's page loads while one is measured (``checks.Preloads``)."""
    pre = Preloads(chromium)
    yield pre
    pre.close()


@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_the_first_chart_is_on_the_first_screen_after_the_answer(app_url, loads, url_path, lang):
    page = loads.take(f"{app_url}/{url_path}?lang={lang}")
    at = [tuple(c.values) for c in CASES].index((url_path, lang))
    for ahead in CASES[at + 1:at + 2]:
        loads.start("{}/{}?lang={}".format(app_url, *ahead.values))
    try:
        wait_until_settled(page)
        page.wait_for_selector("[data-testid='stMain'] [data-testid='stVegaLiteChart']", timeout=120_000)
        at = page.evaluate(POSITIONS)
    finally:
        loads.done(page)
    assert at["chart"] is not None, "no chart on the page"
    assert at["chart"] < at["height"], f"/{url_path}: the first chart starts at {at['chart']:.0f} px, below the first screen"
    if ANSWERED[url_path]:
        assert at["answer"] is not None, f"/{url_path}: no answer sentence"
        assert at["answer"] < at["chart"], f"/{url_path}: the answer comes after the chart"
        assert any(ch.isdigit() for ch in at["answerText"]), "the answer quotes no number"
