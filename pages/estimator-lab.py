"""Estimator Lab: choose q, p, N, R, the seed and λ; watch the estimators live.

Three views of the same draws x ~ q: single per-sample values, R estimates
(each the mean of N values) against the normal approximation from the exact
moments, and one estimate's running mean.  Then Schulman's table, Monte Carlo
beside exact (and beside his published figures when the pair is his).

Every widget is bound to the URL (``?q=&p=&n=&R=&seed=&keys=&lam=&sharex=``), and the
same seed gives the same draws, so a link reproduces the view and the numbers.
Presets set q and p, so a preset travels in the URL as its q and p.
"""

import math

import pandas as pd
import streamlit as st

from charts.estimator_lab import RUNNING_FROM, batch_means_domain, usable_domain
from charts.histograms import common_domain
from i18n import N_, _
from kl_core.estimation import estimators, montecarlo
from kl_core.estimation import sampling_distributions as sampling
from kl_core.estimation.published import match_published
from lab import cache, state, ui
from lab.notes import estimator_lab as notes
from lab.picker import distribution_pair, wait_for_specs
from lab.widgets import (
    active_preset,
    count_slider,
    lambda_slider,
    page_opening,
    preset_bar,
    seed_picker,
)

ALL_KEYS = estimators.COMPARED_KEYS
DEFAULT_KEYS = ("k1", "k2", "k3")
DEFAULT_Q, DEFAULT_P = "normal(0,1)", "normal(0.1,1)"  # Schulman's small-KL case
MAX_DRAWS = 20_000_000  # N·R cap: about 2 s of simulate
LAM_RANGE = (-1.0, 2.0)
PRESET_BUTTONS = {
    "schulman-small": N_("Schulman μ = 0.1"),
    "schulman-large": N_("Schulman μ = 1"),
    "notes-example": N_("Notes μ = 0.5"),
    "heavy-tails": N_("Heavy tails"),
    "laplace-gaussian": N_("Laplace vs Gaussian"),
    "next-token": N_("Next token"),
}
FUNCS = {key: estimators.ESTIMATORS[key].function for key in ALL_KEYS}

first = page_opening(_("Estimator Lab"), _(  # first; its container holds the answer (see lab.widgets)
    r"Draw $x_1,\dots,x_N \sim q$, compute $r = p(x)/q(x)$ and average an estimator over the "
    "$N$ draws: that is **one estimate** of the KL. Repeat it $R$ times with fresh draws. "
    "How often is a single value negative, how far do the estimates scatter, and is their "
    "average the true KL?"
))
st.subheader(_("Change q, p, N, R and the estimators"))

# ------------------------------------------------------------ inputs
preset_bar({key: _(text) for key, text in PRESET_BUTTONS.items()}, DEFAULT_Q, DEFAULT_P)
q, p = distribution_pair(DEFAULT_Q, DEFAULT_P)
active = active_preset(q.spec, p.spec)
if active is not None:
    st.info(notes.preset_line(active.title, active.blurb, active.source), icon=":material/bookmark:")

c_n, c_r, c_seed = st.columns(3, gap="medium")
with c_n:
    n = count_slider(_("N, samples per estimate"), "n", value=1_000, hi=10_000_000,
                     help=_("Each estimate is the mean of N per-sample values."))
with c_r:
    repeats = count_slider(_("R, estimates"), "R", value=200, hi=100_000, accept_from=2,
                           help=_("How many independent estimates, each from N fresh draws."))
with c_seed:
    seed = seed_picker()
c_keys, c_lam = st.columns([1.25, 1], gap="medium")
with c_keys:
    chosen = state.multiselect(
        _("Estimators to show"),
        "keys",
        ALL_KEYS,
        value=DEFAULT_KEYS,
        help=_("k1, k2, k3 and k_lambda are compared with KL[q‖p]; k3_pq estimates the other "
               "direction, KL[p‖q], from the same samples of q."),
    )
star = cache.lambda_star(q.spec, p.spec)
lam = 1.0  # kλ not shown: λ is not used (and not in the URL)
if any(estimators.ESTIMATORS[k].parameter is not None for k in chosen):
    with c_lam:
        lam = lambda_slider(star, LAM_RANGE, why_not=notes.lambda_star_line(star, *LAM_RANGE))
keys = tuple(k for k in ALL_KEYS if k in chosen)  # one order, whatever the click order
if not keys:
    st.info(_("Choose at least one estimator above."), icon=":material/info:")
    st.stop()
if (message := notes.too_many_draws(n, repeats, MAX_DRAWS)) is not None:
    ui.fail(message)

wait_for_specs("q", "p")  # a bad spec: the controls above stay, the results wait
# ------------------------------------------------------------ core calls
try:
    true_kl = cache.exact_kl(q.spec, p.spec)
    true_kl_pq = cache.exact_kl(p.spec, q.spec)
except cache.CORE_ERRORS as exc:
    ui.fail(_("kl_core cannot compute the exact KL for q = {q}, p = {p}: {why}.").format(
        q=q.name, p=p.name, why=ui.error_text(exc)))
moments, failed = cache.moments_or_failures(keys, q.spec, p.spec, lam)
try:
    sim = cache.simulate(q.spec, p.spec, n, repeats=repeats, seed=seed, lam=lam, keys=keys)
except cache.CORE_ERRORS as exc:
    ui.fail(_("kl_core cannot simulate q = {q}, p = {p}: {why}.").format(
        q=q.name, p=p.name, why=ui.error_text(exc)))
targets = {k: montecarlo.target_of(k, true_kl, true_kl_pq) for k in keys}
checks = cache.error_bar_checks(keys, q.spec, p.spec, n, lam)  # can a ±SE from N draws be trusted?
zero_kl = true_kl == 0.0
total = n * repeats
total_checks = cache.error_bar_checks(keys, q.spec, p.spec, total, lam)  # the same at N · R (answer, §4)
same_pair = q.spec == p.spec  # written alike: p = q exactly (a KL can also round to 0 for p ≠ q)

with ui.metric_row():
    st.metric(_("Exact KL[q‖p]"), notes.exact_text(true_kl),
              help=_("kl_core.estimation.exact.kl(q, p): what k1, k3 and kλ estimate."))
    st.metric(_("Exact KL[p‖q]"), notes.exact_text(true_kl_pq),
              help=_("kl_core.estimation.exact.kl(p, q): what k3_pq estimates."))
    st.metric(_("λ*, least-variance λ"), notes.lambda_star_text(star),
              help=_("λ*, the λ of least variance (kl_core.estimation.exact.lambda_star(q, p)). {why}").format(
                  why=ui.error_text(star.note)))
    st.metric(_("Draws, N · R"), f"{n * repeats:,}",
              help=_("seed {seed}; the same seed gives the same draws").format(seed=seed))
for note in [*notes.notes(keys, targets, moments, failed, true_kl, true_kl_pq, same_pair=same_pair),
             *notes.error_bar_notes(checks, {k: sim[k] for k in keys})]:
    ui.note(note.kind, note.text, note.icon)

# ------------------------------------------------------------ 1. single values (drawn at the top)
with first:
    ui.answer(notes.answer({k: sim[k] for k in keys}, n, repeats, moments, total_checks))
    st.header(_("1 · One sample at a time"))
    st.markdown(notes.per_sample_intro({k: sim[k] for k in keys}, total,
                                       min(sim[keys[0]].samples.size, total)))
    share_x = state.toggle(
        _("Same x-axis for every panel"), "sharex", value=True,
        help=_("On: spreads compare at a glance. Off: each panel zooms in on its own values."),
    )
    shared = common_domain([sim[k].samples for k in keys], include=(0.0, *(t for _, t in targets.values())))
    for key, col in ui.grid(keys, key="per-sample"):
        s = sim[key]
        own = common_domain([s.samples], include=(0.0, s.target))
        with col:
            ui.chart(
                cache.estimator_chart(
                    "per-sample", s.samples, key, true_value=s.target, true_label=N_("true"), mean=s.mean,
                    neg_fraction=s.neg_fraction, domain=usable_domain(shared if share_x else own),
                ),
                name=_("lab-{estimator}-per-sample").format(estimator=key),
                caption=notes.per_sample_caption(key, s, zero_kl, same_pair),
            )

# ------------------------------------------------------------ the estimators
st.header(_("The estimators"))
for key, col in ui.grid(keys, key="formulas"):
    with col:
        ui.estimator_formula(key)
        st.markdown(notes.estimator_mean_line(key, lam))

# ------------------------------------------------------------ 2. repeated estimates
st.header(_("2 · One estimate (N = {n:,}), repeated R = {r:,} times").format(n=n, r=repeats))
st.markdown(_(
    "Each bar counts estimates, each the mean of N values. The curve over the bars is the **normal "
    r"approximation with the exact mean and variance**, $\mathcal N(\mu, \sigma^2/N)$ with "
    r"$\mu = \mathbb E_q[k]$ and $\sigma^2 = \mathrm{Var}_q[k]$ from `kl_core.estimation.exact` "
    "(the central limit theorem; its shape is approximate for small N). "
    "Each panel has its own x-axis: read the spread from the axis and the subtitle."
))
for key, col in ui.grid(keys, key="estimates"):
    s, m = sim[key], moments[key]
    approx = notes.normal_curve(m, n)  # None where the exact variance is missing or not resolved
    with col:
        ui.chart(
            cache.estimator_chart(
                "estimates", s.batch_means, key, n=n, approx=approx, true_value=s.target,
                true_label=s.target_name, domain=batch_means_domain(s.batch_means, approx, (s.target,)),
            ),
            name=_("lab-{estimator}-estimates").format(estimator=key),
            caption=notes.estimate_caption(key, m, approx, s.target_name, checks[key],
                                           estimates=s.batch_means, target=s.target),
        )

# ------------------------------------------------------------ 3. running mean
st.header(_("3 · One estimate as N grows"))
st.markdown(_(
    "The mean of the first n values of the first batch, for n = {start:,} … {n:,}, with a band "
    "of ±2 standard errors estimated from those same n values. For an unbiased estimator with a "
    "finite variance and a trusted ±SE the true value should lie inside a band about 95% of the "
    r"time; the bands narrow like $1/\sqrt n$."
).format(start=RUNNING_FROM if n >= 10 * RUNNING_FROM else 1, n=n))
ui.chart(
    cache.estimator_chart(
        "running-means",
        [(k, sim[k].running_n, sim[k].running_mean, sim[k].running_se) for k in keys],
        targets=list(dict.fromkeys(targets[k] for k in keys)),
    ),
    name=_("lab-running-means"),
    caption=notes.running_caption({k: sim[k] for k in keys}, moments, n, checks),
)

# ------------------------------------------------------------ 4. Schulman's table
st.header(_("4 · Schulman's table"))
published = match_published(q, p)
figures, absolute = notes.table_rows({k: sim[k] for k in keys}, moments, total, published, total_checks)
slug = f"{q.spec}-vs-{p.spec}-n{n}-R{repeats}-seed{seed}"
any_overflow = any(notes.variance_overflowed(moments[k]) for k in keys)
any_infinite = any(math.isinf(moments[k].var) and not notes.variance_overflowed(moments[k]) for k in keys)
if not zero_kl:
    st.markdown(notes.table_intro(total, seed, published is not None))
    h = notes.column_name
    # One table under the other: side by side, each would hide its last columns below 1280 px.
    for fig, rows in figures.items():
        st.subheader(fig, anchor=False)
        ui.table(
            pd.DataFrame(rows), name="-".join((fig.replace("/", "-over-"), slug)),
            caption=notes.relative_caption(fig, any_infinite, any_overflow, rows),
            column_config={**{h(c): st.column_config.NumberColumn(format=notes.relative_format(rows))
                              for c in ("exact", "MC", "MC SE")},
                           h("SE trusted"): st.column_config.CheckboxColumn(
                               help=_(notes.SE_TRUSTED))},
        )
    if published is None:
        st.caption(_(notes.NOT_PUBLISHED))
abs_fmt = st.column_config.NumberColumn(format="%.5g")
share_col = notes.column_name("share < 0 (MC)")
with st.expander(_("The same in absolute numbers"), expanded=zero_kl, icon=":material/table:"):
    ui.table(
        pd.DataFrame(absolute),
        name=_("absolute-table-{slug}").format(slug=slug),
        caption=_("Means and per-sample standard deviations; MC over all {total:,} draws.").format(
            total=total),
        column_config={
            **{c: abs_fmt for c in absolute[0]
               if c not in (notes.column_name("estimator"), notes.column_name("target"), share_col)},
            share_col: st.column_config.NumberColumn(format="percent"),
        },
    )
if notes.what_to_notice_applies(keys, zero_kl):
    st.markdown(_(notes.WHAT_TO_NOTICE))

# ------------------------------------------------------------ code
st.header(_("The code"))
ui.show_source(montecarlo.simulate)
for key, col in ui.grid(keys, key="code"):
    with col:
        ui.show_source(FUNCS[key])
ui.show_source(sampling.batch_mean_normal)
