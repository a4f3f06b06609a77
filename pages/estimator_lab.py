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

from charts.estimator_lab import (
    batch_means_domain,
    batch_means_histogram,
    running_means_chart,
    usable_domain,
    with_numpy_rows,
)
from charts.histograms import common_domain, per_sample_histogram
from kl_core import estimators, montecarlo, sampling
from kl_core.distributions import parse
from kl_core.estimators import ESTIMATORS
from kl_core.exact import Moments
from kl_core.presets import PRESETS
from kl_core.published import match_published
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.widgets import distribution_pair, seed_picker

ALL_KEYS = ("k1", "k2", "k3", "k_lambda", "k3_pq")
DEFAULT_KEYS = ("k1", "k2", "k3")
DEFAULT_Q, DEFAULT_P = "normal(0,1)", "normal(0.1,1)"  # Schulman's small-KL case
MAX_DRAWS = 20_000_000  # N·R cap: about 2 s of simulate
SPINNER_DRAWS = 2_000_000  # from here on simulate takes a noticeable moment
LAM_RANGE = (-1.0, 2.0)
PER_ROW = 3  # charts per row: readable at 1280×800
PRESET_BUTTONS = {
    "schulman-small": "Schulman μ = 0.1",
    "schulman-large": "Schulman μ = 1",
    "notes-example": "Notes μ = 0.5",
    "heavy-tails": "Heavy tails",
    "laplace-gaussian": "Laplace vs Gaussian",
    "next-token": "Next token",
}
FUNCS = {
    "k1": estimators.k1,
    "k2": estimators.k2,
    "k3": estimators.k3,
    "k_lambda": estimators.k_lambda,
    "k3_pq": estimators.k3_pq,
}


def grid(keys):
    """Yield (key, column), PER_ROW columns to a row."""
    for start in range(0, len(keys), PER_ROW):
        row = keys[start : start + PER_ROW]
        yield from zip(row, st.columns(PER_ROW, gap="medium"), strict=False)


CORE_ERRORS = (ValueError, ArithmeticError, RuntimeError)  # what kl_core raises on a hard pair


BUILDERS = {
    "per-sample": per_sample_histogram,
    "estimates": batch_means_histogram,
    "running-means": running_means_chart,
}


@st.cache_resource(max_entries=128, show_spinner=False)
def built(kind: str, *args, **kwargs):
    """``BUILDERS[kind](*args, **kwargs)``, kept across reruns and sessions.

    The same inputs (arrays are hashed by content) give the same read-only
    chart object, so a rerun that changes nothing a chart shows does not
    rebuild it.
    """
    return with_numpy_rows(BUILDERS[kind](*args, **kwargs))


def fmt(x: float) -> str:
    """4 significant digits, ∞ spelled out."""
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "undefined"
    return f"{x:.4g}"


leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py

st.title("Estimator Lab")
st.markdown(
    "Draw $x_1,\\dots,x_N \\sim q$, compute $r = p(x)/q(x)$ and average an estimator over the "
    "$N$ draws: that is **one estimate** of the KL. Repeat it $R$ times with fresh draws. "
    "How often is a single value negative, how far do the estimates scatter, and is their "
    "average the true KL?"
)

# ------------------------------------------------------------ inputs
def current_spec(key: str, default: str) -> str | None:
    """The spec in the ``key`` field as it will be drawn (``None`` if it does not parse).

    Read before the field is drawn, so the presets can sit above the fields and
    stay usable when a field holds an invalid spec.
    """
    raw = st.session_state.get(key, st.query_params.get(key, default))
    try:
        return parse(raw).spec
    except ValueError:
        return None


shown_pair = (current_spec("q", DEFAULT_Q), current_spec("p", DEFAULT_P))
with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    st.markdown("**Presets:**", width="content")
    for pkey, text in PRESET_BUTTONS.items():
        preset = PRESETS[pkey]
        st.button(
            text,
            key=f"preset_{pkey}",
            help=f"{preset.title}: q = {preset.q.name}, p = {preset.p.name}. {preset.blurb}",
            type="primary" if shown_pair == (preset.q_spec, preset.p_spec) else "secondary",
            on_click=state.set_values,
            kwargs={"q": preset.q_spec, "p": preset.p_spec},
        )
q, p = distribution_pair(DEFAULT_Q, DEFAULT_P)
active = next(
    (s for s in PRESETS.values() if s.q_spec == q.spec and s.p_spec == p.spec), None
)
if active is not None:
    st.info(f"**{active.title}.** {active.blurb} *({active.source})*", icon=":material/bookmark:")

c_n, c_r, c_seed = st.columns(3, gap="medium")
with c_n:
    n = state.number(
        "N, samples",
        "n",
        min_value=10,
        max_value=10_000_000,
        value=1_000,
        step=100,
        help="Samples per estimate: each estimate is the mean of N per-sample values.",
    )
with c_r:
    repeats = state.number(
        "R, estimates",
        "R",
        min_value=2,
        max_value=100_000,
        value=200,
        step=50,
        help="Repeated estimates: how many independent estimates, each from N fresh draws.",
    )
with c_seed:
    seed = seed_picker()
c_keys, c_lam = st.columns([1.25, 1], gap="medium")
with c_keys:
    chosen = state.multiselect(
        "Estimators to show",
        "keys",
        ALL_KEYS,
        value=DEFAULT_KEYS,
        help="k1, k2, k3 and k_lambda are compared with KL[q,p]; k3_pq estimates the other "
        "direction, KL[p,q], from the same samples of q.",
    )
try:
    lam_star = cache.optimal_lambda(q.spec, p.spec)
except CORE_ERRORS:  # reported with the exact moments below
    lam_star = math.nan
lam = 1.0  # kλ not shown: λ is not used (and not in the URL)
if "k_lambda" in chosen:
    with c_lam:
        lam = state.slider(
            "λ of kλ = −log r + λ(r − 1)",
            "lam",
            min_value=LAM_RANGE[0],
            max_value=LAM_RANGE[1],
            value=0.5,
            step=0.05,
            format="%.3f",
            help="λ = 0 gives k1, λ = 1 gives k3; every λ is unbiased.",
        )
    with c_lam:
        if LAM_RANGE[0] <= lam_star <= LAM_RANGE[1]:
            st.button(
                f"Set λ = λ* = {lam_star:.3f}",
                key="lam_star",
                type="tertiary",
                icon=":material/target:",
                on_click=state.set_values,
                kwargs={"lam": round(lam_star, 3)},
                help="λ*, the λ of least variance, = Cov(−log r, r)/Var(r), from "
                "kl_core.exact.optimal_lambda.",
            )
        else:
            st.markdown(f"λ* = {fmt(lam_star)} is outside the slider's range.")
keys = tuple(k for k in ALL_KEYS if k in chosen)  # one order, whatever the click order
if not keys:
    st.info("Choose at least one estimator above.", icon=":material/info:")
    st.stop()
if n * repeats > MAX_DRAWS:
    ui.fail(
        f"N · R = {n:,} × {repeats:,} = {n * repeats:,} draws is more than this page runs "
        f"({MAX_DRAWS:,}, about two seconds). Lower N or R."
    )

# ------------------------------------------------------------ core calls
try:
    true_kl = cache.exact_kl(q.spec, p.spec)
    true_kl_pq = cache.exact_kl(p.spec, q.spec)
except CORE_ERRORS as exc:
    ui.fail(f"kl_core cannot compute the exact KL for q = {q.name}, p = {p.name}: {exc}.")
moments, failed = {}, {}
for k in keys:
    try:
        moments[k] = cache.estimator_moments(k, q.spec, p.spec, lam if k == "k_lambda" else None)
    except CORE_ERRORS as exc:  # e.g. a variance too large for floating point
        moments[k] = Moments(math.nan, math.nan, str(exc))
        failed[k] = str(exc)
try:
    if n * repeats >= SPINNER_DRAWS:
        with st.spinner(f"Drawing {n * repeats:,} samples and running {len(keys)} estimators…"):
            sim = cache.simulate(q.spec, p.spec, n, repeats=repeats, seed=seed, lam=lam, keys=keys)
    else:
        sim = cache.simulate(q.spec, p.spec, n, repeats=repeats, seed=seed, lam=lam, keys=keys)
except CORE_ERRORS as exc:
    ui.fail(f"kl_core cannot simulate q = {q.name}, p = {p.name}: {exc}.")
targets = {k: montecarlo.target_of(k, true_kl, true_kl_pq) for k in keys}
published = match_published(q, p)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Exact KL[q, p]", fmt(true_kl), help="kl_core.exact.kl(q, p): what k1, k3 and kλ estimate.")
m2.metric("Exact KL[p, q]", fmt(true_kl_pq), help="kl_core.exact.kl(p, q): what k3_pq estimates.")
m3.metric("λ*, least-variance λ", fmt(lam_star), help="kl_core.exact.optimal_lambda(q, p)")
m4.metric("Draws, N · R", f"{n * repeats:,}", help=f"seed {seed}; the same seed gives the same draws")

# ------------------------------------------------------------ warnings
zero_kl = true_kl == 0.0


def reason(note: str) -> str:
    """A core note without its "X is infinite: " head."""
    for head in (" is infinite: ", " is reported as inf: "):
        note = note.split(head, 1)[-1]
    return note


def names(ks) -> str:
    return ", ".join(ESTIMATORS[k].name for k in ks)


for tname, target in (("KL[q,p]", true_kl), ("KL[p,q]", true_kl_pq)):
    users = [k for k in keys if targets[k][0] == tname]
    if math.isinf(target) and users:
        note = next((moments[k].note for k in users if moments[k].note), "")
        st.warning(
            f"**{tname} is infinite** for this pair ({reason(note)}). "
            f"{names(users)} {'has' if len(users) == 1 else 'have'} no finite value to converge "
            "to: the estimates keep growing with N, and bias/true and stdev/true are undefined.",
            icon=":material/all_inclusive:",
        )
infinite_var: dict[str, list[str]] = {}  # reason -> estimators whose variance is infinite
for k in keys:
    m = moments[k]
    if math.isfinite(m.mean) and math.isinf(m.var):
        infinite_var.setdefault(reason(m.note), []).append(k)
for why, ks in infinite_var.items():
    hint = (
        " These estimators contain $r = p/q$, so their variance needs "
        "$\\mathbb{E}_q[r^2] = \\int p(x)^2/q(x)\\,dx < \\infty$, and here it is not."
        if "r^2" in why
        else ""
    )
    st.warning(
        f"**{', '.join(f'Var({ESTIMATORS[k].name})' for k in ks[:-1])}"
        f"{' and ' if len(ks) > 1 else ''}Var({ESTIMATORS[ks[-1]].name}) "
        f"{'is' if len(ks) == 1 else 'are'} "
        f"{'too large for a double (shown as ∞)' if 'largest double' in why else 'infinite'}**: "
        f"{why}.{hint} Their means are still "
        "finite, but their estimates do not settle into a normal shape: no normal curve is "
        "drawn, and the ±2 SE bands and SE columns understate the uncertainty (a rare huge "
        "value can move an estimate far at any N).",
        icon=":material/warning:",
    )
if failed:
    st.warning(
        f"kl_core could not compute the exact moments of {names(failed)} for this pair "
        f"({next(iter(failed.values()))}); their exact columns are left blank. The Monte Carlo "
        "figures are still shown.",
        icon=":material/warning:",
    )
if zero_kl:
    st.info(
        "**p = q**: log r = 0 at every sample, so every estimator gives exactly 0 and the true "
        "KL is 0. Bias/true and stdev/true divide by the true KL, so they are undefined here; "
        "the table below shows the absolute numbers instead.",
        icon=":material/info:",
    )

# ------------------------------------------------------------ the estimators
st.header("The estimators")
for key, col in grid(keys):
    with col:
        ui.estimator_formula(key)
        info = ESTIMATORS[key]
        st.markdown(info.summary + (f" Here λ = {lam:g}." if key == "k_lambda" else ""))
        if info.unbiased_for:
            st.markdown(f"Its mean: ${info.estimates_latex}$ exactly.")
        else:
            st.markdown(f"Its mean: ${info.estimates_latex}$, close to the KL only when p ≈ q.")

# ------------------------------------------------------------ 1. single values
st.header("1 · One sample at a time")
st.markdown(
    f"The per-sample values $k(x_i)$ of all {n * repeats:,} draws (a uniform subsample of "
    f"{min(sim[keys[0]].samples.size, n * repeats):,} is binned). A KL is never negative, "
    "but a single value of k1 or kλ can be."
)
share_x = state.toggle(
    "Same x-axis for every panel",
    "sharex",
    value=True,
    help="On: spreads compare at a glance. Off: each panel zooms in on its own values.",
)
shared = common_domain([sim[k].samples for k in keys], include=(0.0, *(t for _, t in targets.values())))
for key, col in grid(keys):
    s = sim[key]
    tname, target = targets[key]
    if zero_kl:
        cap = "With p = q every log-ratio is 0, so every value is 0."
    elif ESTIMATORS[key].nonnegative:
        cap = f"Never negative ({s.neg_fraction:.0%} below 0); dashed: the true {tname}."
    else:
        cap = (
            f"{s.neg_fraction:.1%} of single values are negative (shaded), though a KL never "
            f"is; dashed: the true {tname}."
        )
    with col:
        ui.chart(
            built(
                "per-sample",
                s.samples, key, true_value=target, true_label="true", mean=s.mean,
                neg_fraction=s.neg_fraction,
                domain=usable_domain(
                    shared if share_x else common_domain([s.samples], include=(0.0, target))
                ),
            ),
            name=f"lab-{key}-per-sample",
            caption=cap,
        )

# ------------------------------------------------------------ 2. repeated estimates
st.header(f"2 · One estimate (N = {n:,}), repeated R = {repeats:,} times")
st.markdown(
    "Each bar counts estimates, each the mean of N values. The black curve is the **normal "
    "approximation with the exact mean and variance**, $\\mathcal N(\\mu, \\sigma^2/N)$ with "
    "$\\mu = \\mathbb E_q[k]$ and $\\sigma^2 = \\mathrm{Var}_q[k]$ from `kl_core.exact` "
    "(the central limit theorem; its shape is approximate for small N). "
    "Each panel has its own x-axis: read the spread from the axis and the subtitle."
)
for key, col in grid(keys):
    s = sim[key]
    m = moments[key]
    tname, target = targets[key]
    approx = sampling.batch_mean_normal(m.mean, m.var, n) if not math.isnan(m.var) else None
    if approx is not None and approx.has_density:
        bias_word = (
            "centred on the truth" if ESTIMATORS[key].unbiased_for else f"centred at {fmt(m.mean)}, not at {tname}"
        )
        cap = f"SE of one estimate σ/√N = {fmt(approx.se)}; the curve is {bias_word}."
    elif approx is not None and math.isinf(approx.var):
        cap = f"No curve: Var({ESTIMATORS[key].name}) is infinite, so the CLT's normal approximation does not exist."
    elif approx is not None:
        cap = "No curve: every estimate is exactly the same (variance 0)."
    else:
        cap = "No curve: the exact moments could not be computed for this pair."
    with col:
        ui.chart(
            built(
                "estimates",
                s.batch_means, key, n=n, approx=approx, true_value=target, true_label=tname,
                domain=batch_means_domain(s.batch_means, approx, (target,)),
            ),
            name=f"lab-{key}-estimates",
            caption=cap,
        )

# ------------------------------------------------------------ 3. running mean
st.header("3 · One estimate as N grows")
st.markdown(
    f"The mean of the first n values of the first batch, for n = 1 … {n:,}, with a band of "
    "±2 standard errors estimated from those same n values. The true value should lie inside "
    "a band about 95% of the time; the bands narrow like $1/\\sqrt n$."
)
finals = " · ".join(
    f"{ESTIMATORS[k].name} {fmt(sim[k].running_mean[-1])} (SE {fmt(sim[k].running_se[-1])})"
    for k in keys
)
unsettled = [ESTIMATORS[k].name for k in keys if math.isinf(moments[k].var)]
ui.chart(
    built(
        "running-means",
        [(k, sim[k].running_n, sim[k].running_mean, sim[k].running_se) for k in keys],
        targets=list(dict.fromkeys(targets[k] for k in keys)),
    ),
    name="lab-running-means",
    caption=f"At n = {n:,}: {finals}."
    + (
        f" Var({', '.join(unsettled)}) is infinite: that band is unreliable, and the mean "
        "jumps when a rare huge value arrives."
        if unsettled
        else ""
    ),
)

# ------------------------------------------------------------ 4. Schulman's table
st.header("4 · Schulman's table")
total = n * repeats
figures = {"bias/true": [], "stdev/true": []}
absolute = []
for key in keys:
    s, m = sim[key], moments[key]
    tname, target = targets[key]
    exact_bias, exact_std = sampling.exact_relative_figures(m.mean, m.var, target)
    se_bias, se_std = sampling.mc_relative_standard_errors(s.samples, s.std, total, target)
    se_mean, se_sd = sampling.mc_standard_errors(s.samples, s.std, total)
    if math.isinf(m.var):  # the MC SEs assume a finite variance
        se_bias = se_std = se_sd = se_mean = math.nan
    pub = published.row(key) if published is not None else None
    name = ESTIMATORS[key].name
    for fig, exact_value, mc_value, se in (
        ("bias/true", exact_bias, s.bias_over_true, se_bias),
        ("stdev/true", exact_std, s.std_over_true, se_std),
    ):
        row = {"estimator": name, "exact": exact_value, "MC": mc_value, "MC SE": se}
        if published is not None:
            row["Schulman"] = (pub.bias_text if fig == "bias/true" else pub.std_text) if pub else "—"
        figures[fig].append(row)
    absolute.append(
        {
            "estimator": name,
            "target": tname,
            "true value": target,
            "mean (exact)": m.mean,
            "mean (MC)": s.mean,
            "mean (MC SE)": se_mean,
            "stdev (exact)": m.std,
            "stdev (MC)": s.std,
            "stdev (MC SE)": se_sd,
            "share < 0 (MC)": s.neg_fraction,
        }
    )
slug = f"{q.spec}-vs-{p.spec}-n{n}-R{repeats}-seed{seed}"
if not zero_kl:
    st.markdown(
        "Each estimator's **bias** and per-sample **standard deviation**, divided by the true "
        "value it estimates (KL[q,p]; KL[p,q] for k3_pq), as in Schulman's post. "
        f"**MC**: this run's {total:,} draws (seed {seed}); **MC SE**: the standard error of "
        "that MC figure, so MC should lie within about 2 MC SE of exact."
        + (
            " **Schulman**: his published figure for this very pair, as printed."
            if published is not None
            else ""
        )
    )
    rel_fmt = st.column_config.NumberColumn(format="%.4f")
    for (fig, rows), col in zip(figures.items(), st.columns(2, gap="medium"), strict=True):
        df = pd.DataFrame(rows)
        with col:
            st.subheader(fig, anchor=False)
            ui.table(
                df,
                name=f"{fig.replace('/', '-over-')}-{slug}",
                caption=(
                    "(mean − true) / true: 0 for an unbiased estimator."
                    if fig == "bias/true"
                    else "stdev / true: the per-sample spread, relative to the truth."
                )
                + (
                    " *Infinity*: the exact variance is infinite; *None*: no standard error, "
                    "which needs a finite variance."
                    if any(math.isinf(moments[k].var) for k in keys)
                    else ""
                ),
                column_config={c: rel_fmt for c in ("exact", "MC", "MC SE")},
            )
    if published is None:
        st.caption(
            "Schulman published figures only for q = N(0,1) with p = N(0.1,1) and p = N(1,1): "
            "the first two presets add his column."
        )
abs_fmt = st.column_config.NumberColumn(format="%.5g")
with st.expander("The same in absolute numbers", expanded=zero_kl, icon=":material/table:"):
    ui.table(
        pd.DataFrame(absolute),
        name=f"absolute-table-{slug}",
        caption=f"Means and per-sample standard deviations; MC over all {total:,} draws.",
        column_config={
            **{c: abs_fmt for c in absolute[0] if c not in ("estimator", "target", "share < 0 (MC)")},
            "share < 0 (MC)": st.column_config.NumberColumn(format="percent"),
        },
    )
st.markdown(
    "**What to notice.** k1 and k3 have the same mean, but k3's stdev/true is much smaller "
    "whenever p is close to q. k2's bias/true is near 0 when p ≈ q and grows with the distance. "
    "The MC column should agree with the exact one to within about 2 MC SE; change the seed to "
    "see it move."
)

# ------------------------------------------------------------ code
st.header("The code")
ui.show_source(montecarlo.simulate)
for key, col in grid(keys):
    with col:
        ui.show_source(FUNCS[key])
ui.show_source(sampling.batch_mean_normal)
