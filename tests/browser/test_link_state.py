"""Issue 17 §5, "the link is what you see": after widgets move, the URL opens the same page.

On every page with widgets bound to the URL (``lab.state``, the distribution
picker), a user moves several kinds of widget the way a user does: sliders and
log sliders with the arrow keys, select boxes, segmented controls, a number
field, a multiselect, a toggle, a cell of a token table, a typed spec.  Then
the test reads the address bar, opens it in a new browser context (a teammate
who got the link) and compares everything the two pages show: every number in
the main area (metrics, captions, table cells, chart text) and every widget's
value.  A URL that lags one step behind the sliders (issue 17 §5: after three
presses of → on q's μ the caption read N(0.15, 1) and the link normal(0.1,1))
shows a different picture, and fails here.

One browser and the session's server are shared with the other browser tests;
each page gets a few moves, one link check per state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.checks import (
    RUN_TIMEOUT_MS,
    numbers,
    scroll_through,
    wait_for_app_run,
    wait_until_settled,
)

MAIN = "[data-testid='stMain']"

#: Every widget's value in the main area, by kind, in page order (labels kept for the diff).
WIDGETS = """() => {
    const main = document.querySelector("[data-testid='stMain']");
    const all = (s) => [...main.querySelectorAll(s)];
    const label = (el) => (el.closest("[data-testid^='st']")?.querySelector('label')?.innerText || '').trim();
    return {
        sliders: all("input[type='range']").map(e => [e.getAttribute('aria-label'), e.getAttribute('aria-valuetext')]),
        texts: all("[data-testid='stTextInput'] input, [data-testid='stTextArea'] textarea").map(e => e.value),
        number_inputs: all("[data-testid='stNumberInput'] input").map(e => [label(e), e.value]),
        selects: all("[data-testid='stSelectbox'] input").map(e => [e.getAttribute('aria-label'), e.value]),
        segmented: all("[data-testid='stButtonGroup']").map(g => [...g.querySelectorAll("[aria-checked='true']")]
            .map(b => b.innerText.trim())),
        multiselects: all("[data-testid='stMultiSelect']").map(m => [...m.querySelectorAll("[data-baseweb='tag']")]
            .map(t => t.innerText.trim())),
        checks: all("input[type='checkbox']").map(e => e.checked),
    };
}"""

#: The page has finished drawing: no skeleton left, every shown table's cells in the DOM
#: (a table in a closed expander has none).
DRAWN = """() => {
    const main = document.querySelector("[data-testid='stMain']");
    if (main.querySelector("[data-testid='stSkeleton']")) return false;
    return [...main.querySelectorAll("[data-testid='stDataFrame']")]
        .every(t => !t.checkVisibility() || t.querySelector("table[role='grid'] td"));
}"""


def settle(page) -> None:
    """Wait for the run, then until every chart is drawn and the page has stopped changing."""
    wait_until_settled(page)


def seen(page) -> dict[str, object]:
    """What a reader sees: every number of the main area (tables and charts too) and every widget's value.

    Charts draw once they have been in view, and a table's cells reach the DOM
    (glide's screen-reader copy) a moment after it is drawn: scroll through,
    wait for both, and for the page to stay still.
    """
    # Open every expander (which are open is not part of the link): their tables count too.
    page.evaluate("""() => document.querySelectorAll("[data-testid='stMain'] details:not([open]) > summary")
        .forEach(s => s.click())""")
    scroll_through(page)
    wait_until_settled(page)
    page.wait_for_function(DRAWN, polling=250, timeout=2 * RUN_TIMEOUT_MS)
    wait_until_settled(page, quiet_ms=400)
    assert page.locator("[data-testid='stException']").count() == 0
    # Opening a "Show the numbers" expander reruns the page to build its table: read until two
    # reads a moment apart agree, so a table still on its way is not read as a missing number.
    now = numbers(page)
    for _ in range(8):
        page.wait_for_timeout(500)
        wait_until_settled(page, quiet_ms=400)
        again = numbers(page)
        if again == now:
            break
        now = again
    return {"numbers": now, **page.evaluate(WIDGETS)}


def _only(a: object, b: object) -> object:
    """What ``a`` has that ``b`` lacks, counted: the part of a long diff worth reading."""
    if isinstance(a, list) and isinstance(b, list):
        return list((Counter(map(str, a)) - Counter(map(str, b))).elements())
    return a


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def assert_link_reproduces(chromium, page) -> None:
    """Open the address bar's URL in a new browser context: same URL, same widgets, same numbers."""
    shown = seen(page)
    link = page.url
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.set_default_timeout(RUN_TIMEOUT_MS)
        fresh = context.new_page()
        fresh.goto(link)
        settle(fresh)
        # lab.state.check_link: a parameter of the page's own link is one the page reads
        assert fresh.get_by_text("This link also set").count() == 0, f"{link}: its own parameters called unread"
        again = seen(fresh)
        assert query(fresh.url) == query(link), "the link was rewritten when opened"
    finally:
        context.close()
    for part in shown:
        assert again[part] == shown[part], (
            f"{part} differ: the link {link} shows another page; "
            f"only before: {_only(shown[part], again[part])}, only after: {_only(again[part], shown[part])}")


# ------------------------------------------------------------------ moving widgets, as a user does


#: The ``nth`` slider whose label starts with ``label`` shows another value than ``before``,
#: looked up afresh each poll: a run may have replaced the element that had focus.
_SLIDER_MOVED = """([label, nth, before]) => {
    const all = document.querySelectorAll(`[data-testid='stMain'] input[type='range'][aria-label^='${label}']`);
    return all.length > nth && all[nth].getAttribute('aria-valuetext') !== before;
}"""


def press(page, label: str, key: str, times: int = 1, nth: int = 0) -> None:
    """Focus the ``nth`` slider whose label starts with ``label`` and press ``key`` ``times`` times, each after the last run.

    The thumb shows its new value at once, before the run.  If it has not moved within a
    third of a run's timeout, the key went to a slider a run had just replaced (as after
    a change of path on the f-divergence page, whose θ range then gets other bounds):
    focus the slider now on the page and press again, as a reader would.
    """
    thumb = page.locator(f"{MAIN} input[type='range'][aria-label^='{label}']").nth(nth)
    for _ in range(times):
        wait_for_app_run(page)
        before = thumb.get_attribute("aria-valuetext")
        for attempt in range(3):
            thumb.focus()
            page.keyboard.press(key)
            try:
                page.wait_for_function(_SLIDER_MOVED, arg=[label, nth, before], timeout=RUN_TIMEOUT_MS // 3)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
        wait_for_app_run(page)


def into_view(page, box) -> None:
    """Scroll ``box`` into view and wait for the charts this brings into view to be drawn.

    A run can replace the element while it is scrolled to (Playwright then reports it
    detached): wait for that run and try again.
    """
    for attempt in range(3):
        try:
            box.scroll_into_view_if_needed()
            break
        except PlaywrightError:
            if attempt == 2:
                raise
            wait_for_app_run(page)
    wait_until_settled(page)


def choose(page, label: str, option: str, nth: int = 0) -> None:
    """Pick ``option`` in the ``nth`` select box called ``label``.

    The box is scrolled into view, and the charts that scrolling brings into view
    are drawn, before the click: a list opened while the page still scrolls closes
    at once (6 of 6 times for the Estimator Lab's p-side "Family", which sits below
    the charts).  A run that redraws the page closes an open list too, as it does
    for a reader, who clicks again: so does this, up to three times.
    """
    box = page.locator(f"{MAIN} input[aria-label='{label}']").nth(nth)
    item = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        into_view(page, box)
        box.click()
        try:
            item.wait_for(state="visible", timeout=5_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    item.click()
    wait_for_app_run(page)


def next_option(page, label: str) -> None:
    """Pick the option after the current one in the select box called ``label``, by keyboard."""
    box = page.locator(f"{MAIN} input[aria-label='{label}']")
    before = box.input_value()
    into_view(page, box)  # see choose(): a list opened while scrolling closes
    box.click()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function("([el, v]) => el.value !== v", arg=[box.element_handle(), before])
    wait_for_app_run(page)


def segment(page, label: str, option: str) -> None:
    """Click ``option`` in the segmented control called ``label``."""
    group = page.locator(f"{MAIN} [data-testid='stButtonGroup']", has_text=label)
    choice = group.get_by_role("radio", name=option, exact=True)
    choice.click()
    # The run starts a moment after the click: until the page has been quiet, the next
    # widget looked up may be one this run replaces.
    expect(choice).to_have_attribute("aria-checked", "true", timeout=RUN_TIMEOUT_MS)
    wait_until_settled(page)


def type_number(page, label: str, value: str) -> None:
    box = page.locator(f"{MAIN} [data-testid='stNumberInput']", has_text=label).locator("input")
    box.fill(value)
    box.press("Enter")
    wait_for_app_run(page)


def type_spec(page, nth: int, spec: str) -> None:
    """Type ``spec`` into the ``nth`` picker's "Type a spec (advanced)" field."""
    expander = page.locator(f"{MAIN} [data-testid='stExpander']", has_text="Type a spec").nth(nth)
    if not expander.locator("input").is_visible():
        expander.locator("summary").click()
    field = expander.locator("input")
    field.fill(spec)
    field.press("Enter")
    wait_for_app_run(page)


def multiselect_add(page, label: str, option: str) -> None:
    """Add ``option`` to the multiselect called ``label``: type it into the box, click it."""
    box = page.locator(f"{MAIN} [data-testid='stMultiSelect']", has_text=label)
    box.locator("input").click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")
    box.get_by_text(option, exact=True).wait_for()  # its tag
    wait_for_app_run(page)


def edit_cell(page, nth: int, row: int, col: int, value: str) -> None:
    """Type ``value`` into cell (``row``, ``col``) of the ``nth`` table: click its first cell, arrow there, Enter."""
    grid = page.locator(f"{MAIN} [data-testid='stDataFrame']").nth(nth)
    into_view(page, grid)  # a run can replace the table while it is scrolled to (seen in CI)
    grid.locator("canvas").first.wait_for()
    box = grid.bounding_box()
    selected = "el => !!el.querySelector(\"td[aria-selected='true']\")"
    for _ in range(5):  # a grid just drawn may take the first click as focus only
        page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # row 0, column 0 (header and rows 35 px)
        page.wait_for_timeout(300)
        if grid.evaluate(selected):
            break
    for _ in range(col):
        page.keyboard.press("ArrowRight")
    for _ in range(row):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    editor = page.locator("input.gdg-input")
    editor.wait_for()
    editor.fill(value)
    editor.press("Enter")
    wait_for_app_run(page)


def url_has(page, key: str, value: str) -> None:
    """The address bar holds ``key=value`` (the page's own state, read from the URL)."""
    assert query(page.url).get(key) == [value], f"{key}={value} is not in {page.url}"


# ------------------------------------------------------------------ the pages


def estimator_lab_sliders(page) -> None:
    """Sliders, a log slider, a family, a number field, a multiselect and a toggle (one round trip:
    the Estimator Lab's runs are the suite's slowest)."""
    choose(page, "Family", "Laplace", 1)  # p
    press(page, "Scale b (log scale)", "ArrowLeft", 2)  # p's scale, log steps
    press(page, "μ, the mean", "ArrowRight", 3)  # q: 0 → 0.15, the three presses
    settle(page)
    url_has(page, "q", "normal(0.15,1)")
    press(page, "N, samples per estimate", "ArrowLeft", 1)
    type_number(page, "Seed", "7")
    multiselect_add(page, "Estimators to show", "k_lambda")  # and λ's slider appears
    press(page, "λ of kλ = −log r + λ(r − 1)", "ArrowRight", 2)
    page.locator(f"{MAIN} [data-testid='stCheckbox']", has_text="Same x-axis").locator("label").click()
    wait_for_app_run(page)


def estimator_lab_categorical(page) -> None:
    choose(page, "Family", "Categorical (tokens)", 0)  # q categorical; p follows (same tokens)
    press(page, "Logit of token", "ArrowRight", 2)  # q's moving token
    edit_cell(page, 0, row=2, col=1, value="1.5")  # q's table: token 2's logit
    type_spec(page, 1, "categorical(0,0,0.5,1,-1)")  # p typed (as many tokens as q)


def control_variates(page) -> None:
    press(page, "λ, the coefficient of r − 1 in kλ", "ArrowRight", 2)
    press(page, "σ, the standard deviation (log scale)", "ArrowLeft", 1, nth=0)  # q's σ
    press(page, "μ, the mean", "ArrowRight", 2, nth=1)  # p's μ
    segment(page, "Path from q to p", "Gaussian scale change")


def bregman_gap(page) -> None:
    press(page, "Move one r by hand", "ArrowRight", 2)
    press(page, "Draws x ~ q shown", "ArrowLeft", 1)
    segment(page, "f (from kl_core.estimation.divergences)", "squared Hellinger")
    press(page, "μ, the mean", "ArrowRight", 3, nth=0)  # q's μ


def gradients(page) -> None:
    press(page, "Drift $s$", "ArrowRight", 2)
    page.locator(f"{MAIN} [data-testid='stExpander']", has_text="More settings").locator("summary").click()
    segment(page, "Tokens drawn from", "older policy")
    segment(page, "the reference", "uniform")
    next_option(page, "Option to highlight")
    edit_cell(page, 0, row=1, col=2, value="0.75")  # token 1's logit of π_θ
    press(page, "β, the KL coefficient", "ArrowRight", 1)


def sequences(page) -> None:
    segment(page, "Chains", "Drift family")  # the default is the sticky pair, without a drift slider
    press(page, "Drift", "ArrowRight", 2)
    press(page, "T, tokens per sequence", "ArrowLeft", 1)
    page.locator(f"{MAIN} [data-testid='stExpander']", has_text="More settings").locator("summary").click()
    press(page, "N, sequences sampled", "ArrowLeft", 1)
    type_number(page, "Seed", "3")


def audit(page) -> None:
    page.locator(f"{MAIN} [data-testid='stExpander']", has_text="More settings").locator("summary").click()
    choose(page, "Mask column (1 = count)", "(none)")
    segment(page, "Direction", "KL[other‖sampler]")


def config_doctor(page) -> None:
    segment(page, "Example", "OpenRLHF")
    segment(page, "Library", "verl")


def home(page) -> None:
    press(page, "Move p away from q", "ArrowRight", 3)


def approx_kl(page) -> None:
    press(page, "Drift θ: how much", "ArrowLeft", 2)  # the clamp chart's θ, first on the page
    choose(page, "Library option", "OpenRLHF k3 (reward)")
    choose(page, "Library", "OpenRLHF")


def f_divergences(page) -> None:
    segment(page, "Path from q", "Categorical logit direction")
    press(page, "Range of θ", "ArrowRight", 2)  # the range's lower end
    segment(page, "Show", "f-divergence ÷ parabola")


def lessons(page) -> None:
    segment(page, "Lesson", "2")
    segment(page, "Step", "3")
    page.locator(f"{MAIN} [data-testid='stExpander']", has_text="More settings").locator("summary").click()
    type_number(page, "Variant", "5")


PAGES: dict[str, tuple[str, Callable[[object], None]]] = {
    "estimator-lab-sliders": ("/estimator-lab", estimator_lab_sliders),
    "estimator-lab-categorical": ("/estimator-lab", estimator_lab_categorical),
    "control-variates": ("/control-variates", control_variates),
    "bregman-gap": ("/bregman-gap", bregman_gap),
    "gradients": ("/gradients", gradients),
    "sequences": ("/sequences", sequences),
    "audit": ("/audit", audit),
    "config-doctor": ("/config-doctor", config_doctor),
    "home": ("/", home),
    "approx-kl": ("/approx-kl", approx_kl),
    "f-divergences": ("/f-divergences", f_divergences),
    "lessons": ("/lessons", lessons),
}


@pytest.mark.parametrize("name", list(PAGES))
def test_the_link_after_moving_widgets_opens_the_same_page(app_url, chromium, name):
    path, move = PAGES[name]
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.set_default_timeout(RUN_TIMEOUT_MS)
        page = context.new_page()
        page.goto(f"{app_url}{path}?lang=en")
        settle(page)
        start = page.url
        move(page)
        settle(page)
        assert page.url != start, "the moves changed nothing in the URL"
        assert_link_reproduces(chromium, page)
    finally:
        context.close()

