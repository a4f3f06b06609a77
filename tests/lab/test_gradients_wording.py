"""lab.notes.gradients: negative λ written with the Unicode minus, and the training words when the
two analytic optima coincide (a constant reward: both are π_ref).

Built at the page's own settings, checked against the core's numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from kl_core.gradients.demo import DEMO_TOKENS
from kl_core.gradients.expected import gradient_entries, gradient_table
from kl_core.gradients.flow import analytic_optima, training_runs
from lab.format import lam_text
from lab.notes import gradients as notes

#: The page's λ slider (pages/gradients.py).
LAM_MIN, LAM_MAX = -1.0, 3.0


def page_setting(drift: float = notes.DEFAULT_DRIFT, on_policy: bool = True, old: float = 0.5,
                 reward: str = "") -> notes.Setting:
    s, problems = notes.setting(DEMO_TOKENS, drift, "", on_policy, old, reward, notes.DEFAULT_REFERENCE)
    assert problems == []
    return s


def table_at(s: notes.Setting, lam: float = 1.0):
    return gradient_table(s.policy, s.ref, sampler=s.sampler, lam=lam, entries=gradient_entries())


def page_runs(s: notes.Setting, beta: float):
    """The training runs and optima as the page computes them (its step size and number of steps)."""
    runs = training_runs(s.policy, s.ref, s.reward, beta, options=notes.TRAINING_OPTIONS,
                         steps=notes.TRAINING_STEPS, lr=notes.training_step(s.reward, beta))
    return runs, analytic_optima(s.ref, s.reward, beta)


# ------------------------------------------------------------------ bug 1: the minus sign of λ
HYPHEN_NUMBER = re.compile(r"(?<![\w$\\])-\d")  # "-4.4", not "on-policy" or a LaTeX "$-\log"


@pytest.mark.parametrize(("drift", "on_policy", "old"), [(-3.0, True, 0.5), (notes.DEFAULT_DRIFT, False, -3.0)])
def test_a_negative_lambda_is_written_with_the_unicode_minus(drift, on_policy, old):
    """?t=-3 said "Both are least at λ = -4.4"; ?smp=old&told=-3 "λ = -0.56" and a button "λ_grad = -0.56"."""
    t = table_at(page_setting(drift, on_policy, old))
    assert t.lam_grad_opt < 0 and not t.lam_value_any
    grad = lam_text(t.lam_grad_opt).replace("-", "−")
    assert grad.startswith("−")

    caption = notes.lambda_caption(t)
    assert f"Both are least at λ = {grad}," in caption
    assert not HYPHEN_NUMBER.search(caption)

    buttons = notes.lambda_buttons(t, LAM_MIN, LAM_MAX)
    (key_g, value_g, label_g, _tip, _off), (key_v, value_v, label_v, help_v, _off_v) = buttons
    assert label_g == f"λ_grad = {grad}"
    # only the label is prose: the key and the λ the button sets stay what the page uses
    assert (key_g, key_v) == ("grad", "value")
    assert value_g == t.lam_grad_opt and value_v == t.lam_value_opt
    assert isinstance(value_g, float) and value_g < 0
    assert f"λ_grad = {grad}." in help_v
    for text in (label_g, label_v, help_v, notes.lambda_value_help(t)):
        assert not HYPHEN_NUMBER.search(text), text


# ------------------------------------------------------------------ bug 2: optima that coincide
def test_with_a_constant_reward_the_runs_end_at_both_optima_which_coincide():
    """?beta=5&rew=0,0,0,0,0,0: both optima are π_ref, so "ends at the reverse-KL optimum ●" (and a caption
    naming only the reverse KL's objective) hid that k3 ends at the forward-KL optimum, as the text above says."""
    s = page_setting(reward="0,0,0,0,0,0")
    runs, optima = page_runs(s, 5.0)
    ref = np.exp(np.asarray(s.ref) - np.logaddexp.reduce(s.ref))
    np.testing.assert_allclose(optima[0], ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(optima[1], ref, rtol=0, atol=1e-12)
    for name in ("k2", "k3"):
        assert runs[name].fixed_point is not None
        assert notes.run_end_text(runs[name], optima) == ["ends at both optima ●○", "(the two coincide here)"]
    caption = notes.training_caption(runs, optima)
    assert caption.startswith(f"k2, k3 end at the optimum of {notes.OBJECTIVE_REVERSE} and at that of "
                              f"{notes.OBJECTIVE_FORWARD}, which coincide here (● and ○).")
    assert "(●);" not in caption and "(○)" not in caption


def test_optima_that_differ_keep_the_one_optimum_words():
    """A reward that is not constant: the optima differ, and each run names its own, as before."""
    s = page_setting()
    runs, optima = page_runs(s, 5.0)
    assert float(np.abs(optima[0] - optima[1]).max()) > 1e-6
    assert notes.run_end_text(runs["k2"], optima) == ["ends at the reverse-KL optimum ●"]
    assert notes.run_end_text(runs["k3"], optima) == ["ends at the forward-KL optimum ○"]
    caption = notes.training_caption(runs, optima)
    assert caption.startswith(f"k2 ends at the optimum of {notes.OBJECTIVE_REVERSE} (●); k3 at the optimum of "
                              f"{notes.OBJECTIVE_FORWARD} (○).")
    assert "coincide" not in caption


def test_coinciding_is_decided_from_the_computed_optima_not_the_reward_text():
    """A reward that is constant but not zero ("2,2,…"), written differently, gives the same words."""
    s = page_setting(reward="2, 2.0, 2e0, 2, 2, 2")
    runs, optima = page_runs(s, 0.5)
    assert notes.run_end_text(runs["k2"], optima) == ["ends at both optima ●○", "(the two coincide here)"]
    assert notes.run_end_text(runs["k3"], optima) == ["ends at both optima ●○", "(the two coincide here)"]
