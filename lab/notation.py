r"""The lab's one notation (issue 20 §5): every symbol, its TeX, its meaning and the pages that use it.

The single source of what a letter means on screen.  The sidebar glossary
(:func:`lab.ui.glossary`, drawn once by ``app.py`` on every page) lists the
symbols of the page being shown; a page that writes RL names (π_θ, π_ref,
π_old) says how they map to q and p with :func:`policy_mapping`, whose one
sentence is defined here.

The conventions it records:

* ``KL[a‖b]`` in prose, ``\mathrm{KL}[a\,\|\,b]`` in TeX; the first argument is
  the distribution sampled from.
* x ~ q, r = p(x)/q(x), KL[q‖p] = E_q[−log r].
* On the RL pages the KL penalty has q = π_θ and p = π_ref, so r = π_ref/π_θ and
  log r = log π_ref − log π_θ (off-policy the tokens come from π_old, while q stays
  π_θ: :func:`policy_mapping` ``"old"``); PPO's approx_kl compares π_θ with the
  sampler π_old, so there q = π_old and p = π_θ.
* t is a token position and nothing else; the Gradients page's drift is s;
  λ the control-variate coefficient, β the KL coefficient, N samples,
  R repetitions.

No streamlit here: meanings are English ``N_`` templates, translated where
shown (:func:`meaning`, :func:`glossary_lines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from i18n import N_, _

__all__ = [
    "ALL_PAGES",
    "MAPPINGS",
    "SYMBOLS",
    "Symbol",
    "audit_label",
    "glossary_lines",
    "meaning",
    "policy_mapping",
    "symbol",
    "symbols_for",
]

HOME, LESSONS, LAB, CV, BREGMAN, FDIV = "", "lessons", "estimator-lab", "control-variates", "bregman-gap", "f-divergences"
APPROX, GRAD, SEQ, AUDIT, DOCTOR = "approx-kl", "gradients", "sequences", "audit", "config-doctor"
#: The URL paths of every page (``lab.pages.PAGES``), in menu order.
ALL_PAGES: tuple[str, ...] = (HOME, LESSONS, LAB, CV, BREGMAN, FDIV, APPROX, GRAD, SEQ, AUDIT, DOCTOR)
_ESTIMATOR_PAGES = (HOME, LESSONS, LAB, CV, BREGMAN, FDIV)
_RL_PAGES = (APPROX, GRAD, SEQ, AUDIT, DOCTOR)
#: The RL pages that write π_θ and π_ref (the audit names its columns sampler and other instead).
_PI_PAGES = (APPROX, GRAD, SEQ, DOCTOR)


@dataclass(frozen=True)
class Symbol:
    """One symbol of the lab.

    Attributes
    ----------
    key : str
        A stable name (``"logr"``, ``"pi_ref"``).
    tex : str
        How the lab writes it, in TeX (KaTeX), without dollars.
    meaning : str
        What it means, English (``N_``); may hold inline maths in ``$…$``.
        Show it as :func:`meaning` (translated).
    pages : tuple of str
        URL paths of the pages that use it (``""`` is Home).
    """

    key: str
    tex: str
    meaning: str
    pages: tuple[str, ...]


SYMBOLS: tuple[Symbol, ...] = (
    # ------------------------------------------------------------------ the setting
    Symbol("q", "q", N_("the distribution the samples are drawn from (the sampler)"), ALL_PAGES),
    Symbol("p", "p", N_("the other distribution, the target the KL compares $q$ with"), ALL_PAGES),
    Symbol("x", r"x \sim q", N_("one sample drawn from $q$ (a token, on the RL pages)"),
           (HOME, LESSONS, LAB, CV, BREGMAN, FDIV, APPROX, GRAD, SEQ, DOCTOR)),
    Symbol("r", r"r = p(x)/q(x)", N_("the ratio of the two probabilities at a sample"), ALL_PAGES),
    Symbol("logr", r"\log r", N_("the log-ratio $\\log p(x) - \\log q(x)$; in the KL penalty "
                                 "$\\log\\pi_\\mathrm{ref}(x) - \\log\\pi_\\theta(x)$"), ALL_PAGES),
    Symbol("kl", r"\mathrm{KL}[a\,\|\,b]",
           N_("the KL divergence between $a$ and $b$, $\\mathbb{E}_a[\\log a/b]$; the first argument is "
              "the distribution sampled from, so $\\mathrm{KL}[q\\|p] = \\mathbb{E}_q[-\\log r]$"), ALL_PAGES),
    Symbol("E", r"\mathbb{E}_q", N_("the expectation over samples $x \\sim q$"),
           tuple(u for u in ALL_PAGES if u != AUDIT)),  # the audit averages its rows, and says so in words
    # ------------------------------------------------------------------ the estimators
    Symbol("k1", r"k_1 = -\log r", N_("unbiased for $\\mathrm{KL}[q\\|p]$; single values can be negative"),
           ALL_PAGES),
    Symbol("k2", r"k_2 = \tfrac12(\log r)^2",
           N_("never negative but biased: equals the KL to second order in $\\log r$"),
           tuple(u for u in ALL_PAGES if u != CV)),  # Control variates compares k1, kλ and k3 only
    Symbol("k3", r"k_3 = (r - 1) - \log r", N_("unbiased for $\\mathrm{KL}[q\\|p]$ and never negative"),
           ALL_PAGES),
    Symbol("k3pq", r"k_3^{pq} = r\log r - (r - 1)",
           N_("k3 of the other direction: unbiased for $\\mathrm{KL}[p\\|q]$ from samples of $q$"),
           (LAB, BREGMAN, APPROX, GRAD, AUDIT)),
    Symbol("klambda", r"k_\lambda = -\log r + \lambda(r - 1)",
           N_("k1 plus $\\lambda$ times the control variate $r - 1$, whose mean under $q$ is 0"),
           (LAB, CV, GRAD)),
    Symbol("lambda", r"\lambda", N_("the control-variate coefficient of kλ ($\\lambda = 1$ gives k3)"),
           (LAB, CV, BREGMAN, GRAD)),
    Symbol("lambda_star", r"\lambda^*", N_("the λ that gives kλ its least variance"), (LAB, CV, GRAD)),
    Symbol("rb", r"\mathrm{rb}",
           N_("Rao–Blackwellized: the exact next-token KL at each sampled prefix, instead of one token's value"),
           (SEQ, AUDIT)),
    # ------------------------------------------------------------------ the policies
    Symbol("pi_theta", r"\pi_\theta",
           N_("the policy being trained, with parameters $\\theta$; on-policy, the tokens are sampled from it "
              "($q = \\pi_\\theta$)"), _PI_PAGES),
    Symbol("pi_ref", r"\pi_\mathrm{ref}",
           N_("the reference policy (the frozen starting model) the KL penalty holds $\\pi_\\theta$ near "
              "($p = \\pi_\\mathrm{ref}$)"), _PI_PAGES),
    Symbol("pi_old", r"\pi_\mathrm{old}",
           N_("the policy that sampled the batch, some updates ago (off-policy). PPO's approx_kl compares "
              "$\\pi_\\theta$ with it, $q = \\pi_\\mathrm{old}$ and $p = \\pi_\\theta$; a KL penalty "
              "keeps $q = \\pi_\\theta$ and $p = \\pi_\\mathrm{ref}$, its averages taken under "
              "$\\pi_\\mathrm{old}$"),
           (APPROX, GRAD, DOCTOR)),
    Symbol("beta", r"\beta", N_("the KL coefficient: the weight of the KL penalty in the reward or the loss"),
           (APPROX, GRAD, SEQ, DOCTOR)),
    Symbol("pull", r"c(x)",
           N_("a KL term's pull on a sampled token: its gradient is $c(x)\\,\\nabla_\\theta\\log\\pi_\\theta(x)$, "
              "and $c > 0$ lowers $\\pi_\\theta(x)$"), (DOCTOR,)),
    # ------------------------------------------------------------------ letters
    Symbol("t", r"t", N_("a token's position in its sequence (and nothing else)"), (SEQ, AUDIT)),
    Symbol("T", r"T", N_("the length of a sequence, in tokens"), (SEQ,)),
    Symbol("s", r"s", N_("the Gradients page's drift: $\\pi_\\theta = \\mathrm{softmax}(s\\,v)$ moves away "
                         "from $\\pi_\\mathrm{ref}$ along the direction $v$"), (GRAD,)),
    Symbol("N", r"N", N_("the number of samples in one estimate"), (HOME, LESSONS, LAB, CV, GRAD, SEQ)),
    Symbol("R", r"R", N_("the number of repetitions of the whole estimate, to see its spread"), (LAB, GRAD)),
    # ------------------------------------------------------------------ f-divergences
    Symbol("f", r"f", N_("a convex function with $f(1) = 0$ that defines an f-divergence"), (BREGMAN, FDIV)),
    Symbol("Df", r"D_f(p\,\|\,q) = \mathbb{E}_q[f(r)]", N_("the f-divergence of $f$; $f(u) = -\\log u$ gives "
                                                          "$\\mathrm{KL}[q\\|p]$"), (BREGMAN, FDIV)),
    Symbol("chi2", r"\chi^2(p\,\|\,q) = \mathbb{E}_q[(r - 1)^2]",
           N_("Pearson's χ² divergence: the variance of the control variate $r - 1$"), (CV, BREGMAN, FDIV)),
    Symbol("theta", r"\theta", N_("a parameter that moves $p$ (or $\\pi_\\theta$) away from $q$"),
           (CV, FDIV, APPROX, GRAD, SEQ, DOCTOR)),
    Symbol("F", r"F", N_("the Fisher information: near $p = q$ every smooth f-divergence is "
                         "$\\tfrac12 f''(1)\\,F\\,\\theta^2$"), (FDIV,)),
    # ------------------------------------------------------------------ statistics
    Symbol("Var", r"\mathrm{Var}", N_("the variance of one sample's value, over $x \\sim q$"),
           (LESSONS, LAB, CV, BREGMAN, SEQ, AUDIT)),
    Symbol("SD", r"\mathrm{SD}",
           N_("the standard deviation, the square root of $\\mathrm{Var}$: the spread of single values"),
           (HOME, LAB, SEQ, AUDIT)),
    Symbol("SE", r"\mathrm{SE} = \mathrm{SD}/\sqrt{N}",  # i18n: ok (TeX)
           N_("the standard error of a mean of $N$ samples: how far the mean typically is from its expectation"),
           (LAB, SEQ, AUDIT)),
    Symbol("ESS", r"\mathrm{ESS}",
           N_("the effective sample size of importance-weighted samples, $(\\sum w)^2/\\sum w^2$"),
           (AUDIT,)),
)

_BY_KEY = {s.key: s for s in SYMBOLS}


def symbol(key: str) -> Symbol:
    """The symbol named ``key``; ValueError naming the known keys otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ValueError(f"key {key!r}: not a symbol; known: {sorted(_BY_KEY)}") from None


def meaning(key: str) -> str:
    """The symbol's meaning, translated into the run's language."""
    return _(symbol(key).meaning)


def symbols_for(url_path: str | None) -> tuple[Symbol, ...]:
    """The symbols a page uses, in :data:`SYMBOLS`' order; every symbol for an unknown page (or None)."""
    if url_path not in ALL_PAGES:
        return SYMBOLS
    return tuple(s for s in SYMBOLS if url_path in s.pages)


def glossary_lines(url_path: str | None) -> list[str]:
    """One Markdown line per symbol of the page: its TeX, a dash, its translated meaning."""
    return ["${tex}$ — {meaning}".format(tex=s.tex, meaning=_(s.meaning)) for s in symbols_for(url_path)]


#: What :func:`policy_mapping` may put in for q and p: the TeX of each, by kind.
#: ``"audit"``'s labels are words, translated when the sentence is made.  (Off-policy,
#: ``"old"``, keeps ``"theta"``'s q and p: only the sampler changes.)
MAPPINGS: dict[str, tuple[str, str]] = {
    "theta": (r"\pi_\theta", r"\pi_\mathrm{ref}"),
    # TRANSLATORS: the audit's two log-prob columns: the policy that sampled the tokens, and the other one.
    "audit": (N_("sampler"), N_("other")),
}


def audit_label(word: str) -> str:
    r"""The audit's ``\text{sampler}`` or ``\text{other}`` label, with the word in the run's language."""
    if word not in MAPPINGS["audit"]:
        raise ValueError(f"word {word!r}: expected one of {MAPPINGS['audit']}")
    return r"\text{" + _(word) + "}"


def policy_mapping(kind: str = "theta") -> str:
    r"""The one sentence that maps an RL page's names to q and p, in the run's language.

    ``"theta"``: "Here q = π_θ, the policy the tokens are sampled from, and
    p = π_ref, so r = π_ref/π_θ."  ``"old"``: off-policy, the tokens come from
    π_old while r is still π_ref/π_θ (what the libraries compute), so the
    averages are under π_old, not q.
    ``"audit"``: the audit's sampler and other columns, as ``\text{…}`` labels
    in the run's language.

    Parameters
    ----------
    kind : {"theta", "old", "audit"}

    Returns
    -------
    str
        Markdown with inline maths.
    """
    if kind == "old":
        return _(
            r"Here the tokens are sampled from $\pi_\mathrm{old}$, an older policy, while $q = \pi_\theta$ and "
            r"$p = \pi_\mathrm{ref}$ still give $r = \pi_\mathrm{ref}/\pi_\theta$ and "
            r"$\log r = \log \pi_\mathrm{ref} - \log \pi_\theta$: every average is now under $\pi_\mathrm{old}$, "
            "not under $q$."
        )
    if kind not in MAPPINGS:
        raise ValueError(f"kind {kind!r}: expected one of {sorted([*MAPPINGS, 'old'])}")
    q, p = MAPPINGS[kind]
    if kind == "audit":
        q, p = audit_label(q), audit_label(p)
    return _(
        "Here $q = {q}$, the policy the tokens are sampled from, and $p = {p}$, so $r = {p}/{q}$ "
        "and $\\log r = \\log {p} - \\log {q}$."
    ).format(q=q, p=p)
