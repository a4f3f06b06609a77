"""The "Config doctor" page in headless Chromium: examples by link, pasted text, the crosswalk link."""

from __future__ import annotations

from collections import Counter

import pytest

from kl_core.doctor.diagnosis import diagnose
from lab.notes import config_doctor as notes
from scripts.translations import english_runs
from tests.browser.checks import numbers, open_page, prose, wait_until_settled


def wait_for_text(page, text: str) -> None:
    page.wait_for_function("(t) => document.body.innerText.includes(t)", arg=text)


def test_an_example_link_shows_its_card_and_fixes(app_url, new_page, wait_for_app):
    d = diagnose(notes.example_text("openrlhf"))
    page = new_page()
    page.goto(f"{app_url}/config-doctor?ex=OpenRLHF")
    wait_for_app(page)
    wait_for_text(page, notes.headline(d))
    wait_for_text(page, "--algo.kl.unbiased_gradient")  # code blocks draw a moment after the run
    body = page.inner_text("[data-testid='stMain']")
    assert "In the loss: --algo.kl.estimator k3 → k3" in body
    for w in d.warnings:
        assert w.code in body
    # the card's chart can reach the page a moment after its text (seen once under load: 0 charts)
    page.wait_for_function("(n) => document.querySelectorAll(\"[data-testid='stVegaLiteChart']\").length >= n",
                           arg=len(d.kl_uses))
    wait_until_settled(page)
    assert page.locator("[data-testid='stVegaLiteChart']").count() == len(d.kl_uses)


def test_pasted_text_is_diagnosed_and_stays_out_of_the_url(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/config-doctor?ex=Your%20own")
    wait_for_app(page)
    wait_for_text(page, "Paste a launch script or config above")
    text = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=kl"
    area = page.locator("[data-testid='stTextArea'] textarea")
    area.fill(text)
    area.press("Control+Enter")
    wait_for_text(page, "ZERO_GRAD_LOSS")
    wait_for_text(page, "actor_rollout_ref.actor.kl_loss_type=kl+")
    assert "kl_loss_type" not in page.url and "ex=Your" in page.url


def test_the_crosswalk_link_opens_that_option(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/config-doctor?ex=OpenRLHF")
    wait_for_app(page)
    link = page.get_by_text("This option in the crosswalk: OpenRLHF:k3")
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url("**/approx-kl?*")
    wait_for_app(page)
    wait_for_text(page, "The library crosswalk")
    assert "lib=OpenRLHF" in page.url and "opt=k3+%28loss%29" in page.url
    wait_for_text(page, "OpenRLHF · compute_approx_kl (KL loss)")  # the row the link named, not the default


# ------------------------------------------------------------ issue 10 and issue 13
# Readable at the defaults, in both languages at every size: test_readability.py (checks.defects too).


#: A pasted config that makes the doctor say most of what it can: the KL in both places, a negative
#: coefficient, a deleted key, an off-policy line, notes on what it did not read.
EDGE = ("python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=True algorithm.kl_penalty=low_var_kl "
        "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k1 "
        "actor_rollout_ref.actor.kl_loss_coef=-0.1 actor_rollout_ref.actor.ppo_epochs=2 ~data.val_files "
        "distillation.enabled=True --cfg job $@")


def _same_numbers(zh, en) -> None:
    got, want = Counter(numbers(zh)), Counter(numbers(en))
    assert got == want, (got - want, want - got)


@pytest.mark.parametrize("query", ["", "&ex=OpenRLHF&library=OpenRLHF", "&ex=TRL"],
                         ids=["defaults-verl", "openrlhf", "trl"])
def test_in_chinese_no_english_sentence_and_the_same_numbers(app_url, chromium, query):
    """The core's warnings, caveats, aggregation notes and the doctor's notes are translated too
    (kl_core Messages, crosswalk.toml's prose fields): no run of four English words is left."""
    with open_page(chromium, f"{app_url}/config-doctor?lang=zh{query}", "1280x800") as zh, \
            open_page(chromium, f"{app_url}/config-doctor?lang=en{query}", "1280x800") as en:
        assert zh.locator("[data-testid='stException']").count() == 0
        assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "配置诊断"
        assert english_runs(prose(zh)) == []
        assert english_runs(prose(en))  # the check can fail: the English page has such runs
        _same_numbers(zh, en)


def _paste(page, text: str, code: str) -> None:
    area = page.locator("[data-testid='stTextArea'] textarea")
    area.fill(text)
    area.press("Control+Enter")
    wait_for_text(page, code)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")
    wait_until_settled(page)  # the card's chart is drawn after the run: read the numbers then


def test_pasted_edge_case_in_chinese(app_url, chromium):
    """KL twice, a negative coefficient, a deleted key, an uncovered term, unread arguments: all in Chinese."""
    with open_page(chromium, f"{app_url}/config-doctor?lang=zh&ex=Your%20own", "1280x800") as zh, \
            open_page(chromium, f"{app_url}/config-doctor?lang=en&ex=Your%20own", "1280x800") as en:
        for page in (zh, en):
            _paste(page, EDGE, "KL_TWICE")
            wait_for_text(page, "NEGATIVE_COEF")
            assert page.locator("[data-testid='stException']").count() == 0
        assert "蒸馏" in prose(zh) and "~data.val_files" in prose(zh)  # the uncovered term's and the deletion's notes
        assert english_runs(prose(zh)) == []
        assert english_runs(prose(en))
        _same_numbers(zh, en)


# ------------------------------------------------------------ issue 20 §4: the doctor speaks web
#: Every code block (fixes, the library's code) and every formula of the main area: its box's
#: width, what it holds, and whether it scrolls sideways where it overflows.
_BOXES = """() => {
    const main = document.querySelector("[data-testid='stMain']");
    const out = [];
    for (const el of main.querySelectorAll("[data-testid='stCode'] pre, .katex-display")) {
        if (el.closest("[data-testid='stExpander']")) continue;  // the page's source, folded away
        const cs = getComputedStyle(el);
        const scrolls = ['auto', 'scroll'].includes(cs.overflowX);
        out.push({kind: el.matches('pre') ? 'code' : 'formula', text: el.innerText.slice(0, 60),
                  scroll: el.scrollWidth, client: el.clientWidth, scrolls});
    }
    return out;
}"""


def _wait_for_code(page, text: str) -> None:
    page.wait_for_function("""(t) => [...document.querySelectorAll("[data-testid='stCode'] pre")]
        .some(p => p.innerText.includes(t))""", arg=text)


@pytest.mark.parametrize("size", ["390x844", "320x640"])
@pytest.mark.parametrize("ex", ["verl", "OpenRLHF"])
def test_on_a_phone_no_fix_code_or_formula_is_cut(app_url, chromium, size, ex):
    """A fix is wrapped whole inside its box; a formula fits or scrolls sideways in its own box."""
    key = next(k for k, e in notes.EXAMPLES.items() if e.label == ex)
    d = diagnose(notes.example_text(key), filename=notes.EXAMPLES[key].file)
    width, height = (int(x) for x in size.split("x"))
    context = chromium.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/config-doctor?ex={ex}")
        page.wait_for_selector("[data-testid='stMain'] h1")
        wait_until_settled(page)
        for w in d.warnings:
            if w.fix:
                _wait_for_code(page, w.fix)
        boxes = page.evaluate(_BOXES)
        assert {b["kind"] for b in boxes} == {"code", "formula"}
        codes = [b for b in boxes if b["kind"] == "code"]
        assert len(codes) >= len({w.fix for w in d.warnings if w.fix}), codes
        for b in codes:
            assert b["scroll"] <= b["client"] + 1, b  # wrapped, not cut nor hidden to the side
        for b in boxes:
            if b["kind"] == "formula":
                assert b["scroll"] <= b["client"] + 1 or b["scrolls"], b
        shown = page.inner_text("[data-testid='stMain']")
        for w in d.warnings:
            if w.fix:
                assert w.fix.replace(" ", "") in shown.replace(" ", "").replace("\n", "")
    finally:
        context.close()


@pytest.mark.parametrize("ex", ["verl", "OpenRLHF", "TRL"])
def test_the_box_and_the_cards_headline_share_the_first_screen(app_url, new_page, wait_for_app, ex):
    key = next(k for k, e in notes.EXAMPLES.items() if e.label == ex)
    d = diagnose(notes.example_text(key), filename=notes.EXAMPLES[key].file)
    page = new_page()  # 1280×800
    page.goto(f"{app_url}/config-doctor?ex={ex}")
    wait_for_app(page)
    wait_for_text(page, notes.headline(d))
    main = page.locator("[data-testid='stMain']")
    assert main.evaluate("m => m.scrollTop") == 0
    box = page.locator("[data-testid='stTextArea'] textarea").bounding_box()
    head = page.get_by_role("heading", name=notes.headline(d), exact=True).bounding_box()
    assert box is not None and head is not None
    assert box["y"] >= 0 and head["y"] + head["height"] <= 800, (box, head)
    # at 1280 px no formula of the card is cut either (OpenRLHF's reward sum was cut at "= R_i −")
    for b in page.evaluate(_BOXES):
        if b["kind"] == "formula":
            assert b["scroll"] <= b["client"] + 1 or b["scrolls"], b


def test_pasting_over_an_example_leaves_no_example_highlighted(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/config-doctor?ex=OpenRLHF")
    wait_for_app(page)
    _paste(page, "echo hello\n", "Library")
    wait_for_text(page, "The doctor can't read this.")
    assert "ex=Your+own" in page.url or "ex=Your%20own" in page.url
    selected = page.locator("[data-testid='stMain'] [data-testid='stButtonGroup'] button[aria-checked='true'], "
                            "[data-testid='stMain'] [data-testid='stButtonGroup'] button[kind*='Active']")
    labels = [t.strip() for t in selected.all_inner_texts()]
    assert "OpenRLHF" not in labels[:1] and "Your own" in labels, labels
    error = page.locator("[data-testid='stAlert']").inner_text()
    assert "--library" not in error and "openrlhf_dapo_hybrid.sh" not in error


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["1280", "390"])
def test_the_reward_sum_is_stacked_and_never_cut(app_url, chromium, size):
    """OpenRLHF's per-token reward and its sum, side by side, were cut at "= R_i −" at 1280 px: now one per line."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "data" / "doctor_examples" / "openrlhf_ppo_hybrid.sh").read_text()
    context = chromium.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/config-doctor?ex=Your%20own")
        page.wait_for_selector("[data-testid='stTextArea'] textarea")
        _paste(page, text, "OFF_POLICY_UNCORRECTED")
        formulas = [b for b in page.evaluate(_BOXES) if b["kind"] == "formula"]
        assert any("𝑅" in b["text"] for b in formulas), formulas  # KaTeX writes R_i in math italic
        for b in formulas:
            assert b["scroll"] <= b["client"] + 2, b  # whole: not even a scroll box that hides its end
        codes = [b for b in page.evaluate(_BOXES) if b["kind"] == "code"]
        assert all(b["scroll"] <= b["client"] + 1 for b in codes), codes
    finally:
        context.close()
