"""Gradients: a KL estimator's value is not its gradient.

The page opens with its question (does k3 used as a loss point where
∇KL[π_θ‖π_ref] points?), its answer from the numbers and one chart: k2's and
k3's expected gradients as losses per token, their difference and the true
gradient.  Then a categorical policy π_θ = softmax(θ) over a small vocabulary,
π_ref (uneven by default, or uniform), and every KL option of the crosswalk
used as a loss or a reward:

1. each option's exact expected gradient per logit beside the two true KL
   gradients, with the cosines (``kl_core.gradients.expected.gradient_table``);
2. the spread of one N-sample estimate, projected on ∇KL[π_θ‖π_ref];
3. where exact expected-gradient training with k2, k3 and k1 ends
   (``kl_core.gradients.flow``);
4. what each library's option differentiates to, with the library's fix.

URL keys: ``t`` (the drift s; the key stays ``t`` for old links), ``k``, ``piref``, ``logits``, ``smp``, ``told``, ``lamg`` (λ; not ``lam``, the value pages' λ,
which their buttons set from code and would carry here), ``n``,
``seed``, ``option`` (the highlighted option, e.g. ``?option=verl:low_var_kl``; ``?opt=`` is read too),
``rew``, ``beta``.
"""

import numpy as np
import streamlit as st

from charts.gradients import (
    gradient_panel,
    lambda_spread_chart,
    option_color,
    pair_chart,
    spread_panel,
    symmetric_domain,
    training_panel,
)
from charts.histograms import common_domain
from i18n import _
from kl_core.gradients import expected as gradients
from kl_core.gradients import flow as gradient_flow
from lab import cache, state, ui
from lab.notes import gradients as notes
from lab.token_setting import token_setting
from lab.widgets import count_slider, page_opening, seed_picker

LAM_MIN, LAM_MAX = -1.0, 3.0
_UNUSABLE_OPT = "_gradients_unusable_opt"  # session slot: a link's ?opt= the page could not use
PANEL_WIDTH = 260  # panels wrap: three a row at 1280 px, two at 1024, one on a phone


def panels(items, draw) -> None:
    """Draw ``draw(item)`` for each item in fixed-width boxes that wrap onto new rows."""
    with st.container(horizontal=True, wrap=True, gap="small"):
        for item in items:
            with st.container(width=PANEL_WIDTH):
                draw(item)


first = page_opening(  # first; its container holds the mapping sentence, which needs the sampler, and the answer
    _("Gradients"), _("**Does the gradient of k3 used as a loss point where the KL's gradient points?**"))

# ------------------------------------------------------------ the setting
s = token_setting()  # ?t= (the drift s) and presets; ?k= ?piref= ?smp= ?told= ?logits= ?rew= under "More settings"
table0 = cache.gradient_table(s.policy, s.ref, s.sampler, 1.0)  # k2's and k3's rows do not depend on λ
with first:
    st.caption(notes.opening_caption(table0))
    ui.answer(notes.answer(table0))
    ui.chart(pair_chart(table0.row("k2").expected_grad, table0.row("k3").expected_grad, table0.true_reverse,
                        names=notes.pair_names(table0)),
             name=_("k2-and-k3-as-losses"), caption=notes.pair_caption(table0))

st.markdown(_(
    "k3 is an excellent estimator of a KL's **value**. But put `k3.mean()` into a loss, let autograd "
    "differentiate it, and the **gradient** you get is not the gradient of that KL. Here is a "
    r"policy $\pi_\theta = \mathrm{softmax}(\theta)$ over a few tokens, a reference "
    r"$\pi_\mathrm{ref}$, and the exact expected gradient in $\theta$ of every KL option: "
    "Schulman's estimators used as a loss, and what each RL library does."
))
ui.formulas(*notes.GRADIENT_FORMULAS)

long_raw = st.query_params.get(notes.OPTION_KEY)  # read before the menu drops an unusable one
state.reads(notes.SHORT_OPTION_KEY)
linked, unusable = notes.link_option(long_raw, st.query_params.get(notes.SHORT_OPTION_KEY))
if linked and notes.OPTION_KEY not in st.session_state:  # first run: ?option=verl:k3 is low_var_kl
    st.session_state[notes.OPTION_KEY] = linked
if notes.SHORT_OPTION_KEY in st.query_params:  # ?opt= is read once: the menu's ?option= (or a note) replaces it
    st.session_state[_UNUSABLE_OPT] = "" if long_raw else unusable
    del st.query_params[notes.SHORT_OPTION_KEY]
unusable = unusable or st.session_state.get(_UNUSABLE_OPT, "")
sec1, sec2 = st.container(), st.container()  # filled in this order below: view 2 holds λ, which view 1 uses
with sec2:
    st.header(_("2. One estimate from N tokens: how far from its mean?"))
    st.markdown(notes.k_lambda_intro(table0, LAM_MIN, LAM_MAX))
    c_lam, c_n, c_seed = st.columns([1.6, 1, 1], gap="medium")
    with c_lam:
        lam = state.slider(_("λ of kλ"), "lamg", min_value=LAM_MIN, max_value=LAM_MAX, value=1.0,
                           step=0.01, format="%.3f")
        with st.container(horizontal=True, gap="small"):
            for key, value, text, tip, off in notes.lambda_buttons(table0, LAM_MIN, LAM_MAX):
                st.button(text, key=f"set_lam_{key}", on_click=state.set_values, kwargs={"lamg": value},
                          disabled=off, help=tip, type="tertiary")
    with c_n:
        n = count_slider(_("N, tokens per estimate"), "n", value=100, hi=100_000, lo=1,
                         help=_("How many sampled tokens one gradient estimate averages."))
    with c_seed:
        seed = seed_picker()

table = cache.gradient_table(s.policy, s.ref, s.sampler, lam)
with sec1:
    with ui.metric_row():
        st.metric(notes.KL_REVERSE, f"{table.kl_reverse:.4g}", help=_("The penalty RLHF means: reverse KL."))
        st.metric(notes.KL_FORWARD, f"{table.kl_forward:.4g}", help=_("The other direction: forward KL."))
        st.metric(_("‖∇ reverse KL‖"), f"{np.linalg.norm(table.true_reverse):.4g}",
                  help=_("The length of the gradient of the reverse KL in the logits."))
        st.metric(_("‖∇ forward KL‖"), f"{np.linalg.norm(table.true_forward):.4g}",
                  help=_("The length of the gradient of the forward KL in the logits."))
    headline = notes.headline(table)
    ui.note(headline.kind, headline.text, headline.icon)

# ------------------------------------------------------------ 1. expected gradients
with sec1:
    st.header(_("1. The expected gradient of each option, per logit"))
    chosen = state.select(
        _("Option to highlight"), notes.OPTION_KEY, notes.option_names(), value=notes.DEFAULT_OPTION,
        allowed=notes.option_problem(unusable),
        help=_("Shown first in views 1 and 2; a library option is also marked ★ in the table of view 4, "
               "which lists only library options. Links from the crosswalk set it."),
    )
    if chosen != notes.DEFAULT_OPTION:  # the reader chose: the note on the link's ?opt= is stale
        st.session_state.pop(_UNUSABLE_OPT, None)
    elif unusable and not long_raw:  # the menu's own note covers ?option=
        ui.note("warning", _("The link set `opt={raw}`, which this page can't use ({allowed}); showing "
                             "**{shown}** instead.").format(raw=unusable, allowed=notes.option_problem(unusable),
                                                            shown=chosen), ":material/link_off:")
    note = notes.chosen_note(table, chosen)
    ui.note(note.kind, note.text, note.icon)
    shown = notes.panel_names(chosen)
    st.markdown(_(
        r"Bars: the option's expected gradient in each logit $\theta_x$, averaged exactly over the "
        r"sampled token. Ticks: $\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ (reverse KL, "
        r"the penalty RLHF means). Hollow circles: $\nabla\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]$ "
        "(forward KL). The highlighted option comes first."
    ))
    y_dom = symmetric_domain([table.true_reverse, table.true_forward,
                              *(table.row(name).expected_grad for name in shown)])

    def draw_gradient(name: str) -> None:
        row = table.row(name)
        ui.chart(gradient_panel(row, table.true_reverse, table.true_forward,
                                title=notes.option_title(row), subtitle=notes.panel_subtitle(row, table.on_policy),
                                y_domain=y_dom), name=_("gradient-{option}").format(option=name), downloads=False)

    panels(shown, draw_gradient)
    cosines = notes.cosine_frame(table, shown)
    ui.table(cosines, name=_("gradient-cosines"), column_order=list(cosines.columns[:6]),
             caption=_("A cosine of +1.000 means the same direction; — means the expected gradient, or the "
                       "gradient it is compared with, is zero. "
                       "The CSV adds the expected gradient per logit."))
    ui.show_source(gradients._basic_coef)  # c(x) of each basic option: g(x) = c(x)·(e_x − π_θ)
    ui.show_source(gradients._expected)  # E_s[g] = Σ_x s(x) c(x) (e_x − π_θ), exactly

# ------------------------------------------------------------ 2. the spread (its header and controls are above)
with sec2:
    draws = cache.projection_draws(s.policy, s.ref, s.sampler, lam, tuple(shown), n,
                                   notes.SPREAD_REPEATS, seed)
    if not draws:
        ui.note("info", _(r"$\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ is zero here "
                          r"($\pi_\theta = \pi_\mathrm{ref}$), so there is no direction to project on. "
                          r"Move the drift $s$ (or, with logits typed by hand, change them)."), ":material/info:")
    else:
        target = float(np.linalg.norm(table.true_reverse))
        x_dom = common_domain([d[0] for d in draws.values()], coverage=0.995, include=(0.0, target))

        def draw_spread(name: str) -> None:
            samples, mean, sd = draws[name]
            row = table.row(name)
            ui.chart(spread_panel(samples, mean=mean, sd=sd, target=target, domain=x_dom, title=name,
                                  subtitle=notes.spread_subtitle(mean, sd, float(samples.mean()),
                                                                 float(samples.std(ddof=1))),
                                  colour=option_color(row)), name=_("spread-{option}-n{n}").format(option=name, n=n), downloads=False)

        panels(shown, draw_spread)
        ui.caption(notes.spread_caption(n, notes.SPREAD_REPEATS, target))
    lams = np.linspace(*notes.lambda_chart_range(table, LAM_MIN, LAM_MAX), 81)
    ui.chart(lambda_spread_chart(lams, cache.k_lambda_spread(s.policy, s.ref, s.sampler, lams), lam=lam,
                                 lam_grad=table.lam_grad_opt, lam_value=notes.lambda_value_mark(table)),
             name=_("k-lambda-spread"), caption=notes.lambda_caption(table))
    ui.show_source(gradients.k_lambda_spread)

# ------------------------------------------------------------ 3. training
st.header(_("3. Where training with each KL loss ends"))
st.markdown(_(
    r"Maximise $\mathbb{{E}}[R] - \beta\cdot(\text{{{loss}}})$ by exact expected-gradient ascent, "
    r"on-policy, starting from $\pi_\theta$. "
    "Each option's loop stops where its own gradient vanishes: for k2 (and k1_score) at the "
    "optimum of the reverse KL, for k3 at the optimum of the forward KL — **this is what GRPO's k3 "
    "loss optimises** — and k1, whose expected gradient is zero, ignores the KL altogether."
).format(loss=_("KL loss")))  # the TeX label translated too
beta = state.slider(_("β, the KL coefficient"), "beta", min_value=0.05, max_value=5.0, value=0.5,
                    step=0.05, format="%.2f")
st.caption(_("Reward R = ({r}); change it token by token under “More settings” at the top.").format(
    r=notes.values_text(s.reward)))
try:
    runs, optima = cache.training_runs(s.policy, s.ref, s.reward, beta, notes.TRAINING_OPTIONS,
                                       notes.TRAINING_STEPS, notes.training_step(s.reward, beta))
except ValueError as exc:
    ui.note("warning", _("The training picture cannot be drawn here: {why}.").format(why=ui.error_text(exc)),
            ":material/warning:")
else:
    def draw_run(name: str) -> None:
        run, row = runs[name], table.row(name)
        ui.chart(training_panel(run.steps, run.probs, optima, title=notes.option_title(row),
                                subtitle=notes.run_end_text(run, optima), colour=option_color(row)),
                 name=_("training-{option}").format(option=name), downloads=False)

    panels(notes.TRAINING_OPTIONS, draw_run)
    ui.caption(notes.training_caption(runs, optima))
    ends = notes.training_frame(s, runs, optima)
    ui.table(ends, name=_("training-ends"),
             column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ends.columns[2:]})
    ui.show_source(gradient_flow.analytic_optima)

# ------------------------------------------------------------ 4. the libraries
st.header(_("4. What your library does"))
st.markdown(_(
    "Every KL option of the crosswalk with a gradient, at this setting: what its expected gradient "
    r"is here, what it is in general on-policy and with tokens from $\pi_\mathrm{old}$ (clamps "
    r"inactive), and the library's own setting that gives $\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ "
    "where the option does not."
))
ui.table(notes.library_frame(table, chosen), name=_("library-gradients"), height=420,
         caption=notes.library_caption(table, chosen),
         column_config={"": st.column_config.TextColumn(width=30, pinned=True),
                        _("option"): st.column_config.TextColumn(pinned=True),
                        _("the library's fix"): st.column_config.TextColumn(width="large")})

with st.expander(_("Reproduce these numbers on the command line"), icon=":material/terminal:"):
    st.code(notes.cli_command(s, lam, beta), language="bash")
