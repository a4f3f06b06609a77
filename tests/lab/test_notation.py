"""lab.notation: the one notation (issue 20 §5), its glossary lines and the RL mapping sentence."""

from __future__ import annotations

import re

import pytest

import i18n
from kl_core.estimation.estimators import ESTIMATORS
from lab import notation
from lab.pages import PAGES

_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_page_is_known_and_every_symbol_names_real_pages():
    assert set(notation.ALL_PAGES) == {p.url_path for p in PAGES}
    for s in notation.SYMBOLS:
        assert s.pages, s.key
        assert set(s.pages) <= set(notation.ALL_PAGES), s.key
    assert len({s.key for s in notation.SYMBOLS}) == len(notation.SYMBOLS)


def test_the_symbols_the_brief_names_are_there():
    keys = {s.key for s in notation.SYMBOLS}
    assert {"q", "p", "x", "r", "logr", "kl", "k1", "k2", "k3", "klambda", "lambda", "lambda_star", "rb",
            "pi_theta", "pi_ref", "pi_old", "beta", "N", "R", "t", "s", "chi2", "Df", "f", "Var", "SE",
            "SD"} <= keys


def test_estimator_tex_is_the_registrys():
    """k1, k2, k3, kλ, k3_pq are written as kl_core's registry writes them (modulo spacing)."""
    same = {"k1": "k1", "k2": "k2", "k3": "k3", "klambda": "k_lambda", "k3pq": "k3_pq"}
    for key, reg in same.items():
        assert notation.symbol(key).tex.replace(" ", "") == ESTIMATORS[reg].latex.replace(" ", ""), key


def test_kl_is_written_with_double_bars_and_t_is_only_a_position():
    assert notation.symbol("kl").tex == r"\mathrm{KL}[a\,\|\,b]"
    for s in notation.SYMBOLS:
        assert "KL[q, p]" not in s.meaning and "KL[q,p]" not in s.meaning
    assert "position" in notation.symbol("t").meaning
    # the drift is s, never t
    assert r"\mathrm{softmax}(s" in notation.symbol("s").meaning


def test_every_page_gets_its_symbols_and_home_follows_the_estimator_notation():
    for url in notation.ALL_PAGES:
        assert notation.symbols_for(url), url
    home = {s.key for s in notation.symbols_for("")}
    assert {"q", "p", "r", "kl", "k1", "k2", "k3"} <= home and "pi_theta" not in home
    for url in ("gradients", "sequences", "approx-kl", "config-doctor"):  # the audit writes sampler and other
        assert {"pi_theta", "pi_ref"} <= {s.key for s in notation.symbols_for(url)}, url
    assert notation.symbols_for("no-such-page") == notation.SYMBOLS
    with pytest.raises(ValueError, match="key"):
        notation.symbol("nope")


@pytest.mark.parametrize("url", notation.ALL_PAGES)
def test_every_meaning_is_translated_in_zh(url):
    """Every glossary line reads in Chinese: a translated meaning differs from the English and has Chinese."""
    english = notation.glossary_lines(url)
    with i18n.using("zh"):
        chinese = notation.glossary_lines(url)
    assert len(english) == len(chinese)
    for en, zh in zip(english, chinese, strict=True):
        assert zh != en and _CJK.search(zh), zh
        assert zh.split(" — ")[0] == en.split(" — ")[0]  # the TeX is the same in both languages


def test_the_mapping_sentence_is_defined_once_and_fills_q_and_p():
    theta = notation.policy_mapping()
    assert theta == (r"Here $q = \pi_\theta$, the policy the tokens are sampled from, and $p = \pi_\mathrm{ref}$, "
                     r"so $r = \pi_\mathrm{ref}/\pi_\theta$ and $\log r = \log \pi_\mathrm{ref} - \log \pi_\theta$.")
    old = notation.policy_mapping("old")  # off-policy: r keeps π_θ; only the sampler is π_old
    assert r"q = \pi_\theta" in old and r"r = \pi_\mathrm{ref}/\pi_\theta" in old and "under $\\pi_\\mathrm{old}$" in old
    assert r"q = \pi_\mathrm{old}" not in old
    audit = notation.policy_mapping("audit")
    assert r"q = \text{sampler}" in audit and r"r = \text{other}/\text{sampler}" in audit
    with i18n.using("zh"):
        zh = notation.policy_mapping("audit")
        assert r"\text{采样分布}" in zh and r"\text{另一策略}" in zh and r"r = \text{另一策略}/\text{采样分布}" in zh
        assert _CJK.search(notation.policy_mapping())
    with pytest.raises(ValueError, match="kind"):
        notation.policy_mapping("nope")
    with pytest.raises(ValueError, match="word"):
        notation.audit_label("nope")


def test_the_f_divergences_page_lists_no_symbol_it_never_uses():
    """Audit finding: it listed rb, k3^pq and N (the number of samples), though there N only names
    the normal distribution; tests/app/test_symbols_used.py checks every page's list against its text."""
    keys = {s.key for s in notation.symbols_for("f-divergences")}
    assert not keys & {"rb", "k3pq", "N"}
    assert {"f", "Df", "chi2", "F", "theta"} <= keys


def test_pi_old_and_log_r_agree_with_both_rl_readings():
    """Audit finding: the glossary's π_old said "off-policy, q = π_old" beside the Gradients page's
    policy_mapping("old") (tokens from π_old, q still π_θ), and log r was "on the RL pages"
    log π_ref − log π_θ, while approx_kl's log r is log π_θ − log π_old (q = π_old, p = π_θ)."""
    old, logr = notation.symbol("pi_old").meaning, notation.symbol("logr").meaning
    assert "off-policy, $q = \\pi_\\mathrm{old}$" not in old
    assert r"$q = \pi_\mathrm{old}$ and $p = \pi_\theta$" in old  # PPO's approx_kl (lab.notes.approx_kl.ROLES_LINE)
    assert r"keeps $q = \pi_\theta$ and $p = \pi_\mathrm{ref}$" in old  # the KL penalty (policy_mapping("old"))
    assert r"q = \pi_\theta" in notation.policy_mapping("old") and r"q = \pi_\mathrm{old}" not in notation.policy_mapping("old")
    assert "on the RL pages" not in logr and "in the KL penalty" in logr
    assert "pi_old" not in {s.key for s in notation.symbols_for("sequences")}
