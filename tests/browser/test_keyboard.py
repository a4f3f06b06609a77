"""Keyboard only (issue 21 §3): every page walked with Tab, in reading order, focus always visible.

For every page of ``lab.pages.PAGES`` (English, 1280×800, defaults) the test
presses Tab until focus comes back round (no keyboard trap: it must, within
:data:`MAX_TABS` presses) and records each element that takes focus:

* the first is the **skip link**, and Enter on it moves focus to the page's title;
* every focused element shows a **visible focus indicator**: an outline, a
  box shadow or a border that differs from its unfocused look;
* in the main area the order follows **reading order**: no element comes
  before (above) the one focused before it by more than a line, except at the top of
  the next column (side-by-side pickers and panels are read column by column).

Also: a slider moves with the arrow keys, and "Show the numbers" opens with
Enter and shows a real table.
"""

from __future__ import annotations

import pytest

from lab.pages import PAGES
from tests.browser.checks import Preloads, wait_for_a11y

MAX_TABS = 250
#: Pixels an element may sit above the previous one (side-by-side widgets of one row).
ROW_SLACK = 60
#: An element this far right of the previous one starts the next column (which may start higher).
COLUMN_PX = 50

_FOCUS = r"""() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const ring = (s) => (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
        || (s.boxShadow && s.boxShadow !== 'none');
    // A text box or menu draws its ring on a wrapper (BaseWeb): look a few levels up too.
    let visible = ring(cs);
    for (let a = el.parentElement, i = 0; !visible && a && i < 6; a = a.parentElement, i++) {
        visible = ring(getComputedStyle(a));
    }
    const main = el.closest("[data-testid='stMain']");
    const scrolled = (main ? main.scrollTop : 0) + window.scrollY;  // stMain is the scroll box
    return {tag: el.tagName.toLowerCase(), id: el.id || '', testid: el.closest('[data-testid]')?.getAttribute('data-testid') || '',
            text: (el.getAttribute('aria-label') || el.innerText || el.value || '').trim().slice(0, 50),
            top: r.top + scrolled, left: r.left, height: r.height, width: r.width, visible, main: !!main};
}"""


def _walk(page) -> list[dict]:
    seen = []
    page.keyboard.press("Tab")
    first = page.evaluate(_FOCUS)
    seen.append(first)
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        now = page.evaluate(_FOCUS)
        if now is None or (now["id"] and now["id"] == first["id"]):
            return seen  # back round to the start: no trap
        seen.append(now)
    pytest.fail(f"focus did not come back round within {MAX_TABS} Tab presses (a keyboard trap?); "
                f"last: {seen[-5:]}")


@pytest.fixture(scope="module")
def loads(chromium):
    """The walks' pages, 1280×800: the next page loads while one is walked (``checks.Preloads``)."""
    pre = Preloads(chromium)
    yield pre
    pre.close()


WALKED = [info.url_path for info in PAGES]


@pytest.mark.parametrize("url_path", WALKED, ids=[info.url_path or "home" for info in PAGES])
def test_tab_walk(app_url, loads, wait_for_app, url_path):
    page = loads.take(f"{app_url}/{url_path}?lang=en")
    for ahead in WALKED[WALKED.index(url_path) + 1:][:1]:
        loads.start(f"{app_url}/{ahead}?lang=en")
    wait_for_app.settled(page)
    wait_for_a11y(page)  # the boxes that scroll get their tabindex 200 ms after the last change
    seen = _walk(page)
    loads.done(page)
    name = url_path or "home"
    assert seen[0]["id"] == "kl-skip-link", f"{name}: the first Tab stop is {seen[0]}, not the skip link"
    invisible = [s for s in seen if s["width"] > 0 and not s["visible"]]
    assert not invisible, f"{name}: focus not visible on {len(invisible)} element(s): {invisible[:5]}"
    main = [s for s in seen if s["main"] and s["width"] > 0]
    assert len(main) >= 3, f"{name}: only {len(main)} Tab stops in the main area"
    # Going up is reading order only into the next column (side-by-side pickers, panels).
    back = [(a, b) for a, b in zip(main, main[1:], strict=False)
            if b["top"] < a["top"] - ROW_SLACK and b["left"] < a["left"] + COLUMN_PX]
    assert not back, (f"{name}: Tab order goes back up the page: "
                      + "; ".join(f"{a['text']!r} (y={a['top']:.0f}) then {b['text']!r} (y={b['top']:.0f})"
                                  for a, b in back[:5]))


def test_skip_link_moves_focus_to_the_main_content(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/estimator-lab?lang=zh")
    wait_for_app(page)
    wait_for_a11y(page)  # lab.a11y's script inserts the skip link (seen once without it: focus on '')
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "kl-skip-link"
    assert page.evaluate("document.activeElement.textContent") == "跳到主要内容"
    box = page.locator("#kl-skip-link").bounding_box()
    assert box and box["y"] >= 0, "the focused skip link is on screen"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.tagName") == "H1"
    page.keyboard.press("Tab")
    assert page.evaluate("!!document.activeElement.closest(\"[data-testid='stMain']\")")


def test_slider_and_show_the_numbers_by_keyboard(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/control-variates?lang=en")
    wait_for_app.settled(page)
    slider = page.locator("[data-testid='stSlider'] input[type='range']").first
    before = slider.input_value()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("([v]) => document.activeElement.value !== v", arg=[before])
    assert float(slider.input_value()) > float(before)
    wait_for_app(page)
    summary = page.locator("[data-testid='stExpander'] summary", has_text="Show the numbers").first
    summary.focus()
    page.keyboard.press("Enter")
    table = page.locator("[data-testid='stExpander'] table").first
    table.wait_for()
    assert table.locator("th").count() >= 2 and table.locator("tbody tr").count() >= 2
