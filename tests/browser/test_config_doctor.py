"""The "Config doctor" page in headless Chromium: examples by link, pasted text, the crosswalk link."""

from __future__ import annotations

from kl_core.doctor import diagnose
from lab.notes import config_doctor as notes


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
