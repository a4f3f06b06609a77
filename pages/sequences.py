"""Tokens & sequences: the KL between whole sequences, six estimators of it, β per token, and its gradient.

Two Markov chains over K tokens stand in for a policy π_θ and a reference
π_ref (``kl_core.sequences.markov``).  The page shows the KL each position adds, how the
spread of every sequence estimator grows with T (exact lines, Monte Carlo
points: ``kl_core.sequences.estimators``, ``kl_core.sequences.montecarlo``), what summing
or averaging over tokens does to a KL coefficient β (``kl_core.libraries.loss_aggregation``),
and which per-token losses give the gradient of the sequence KL
(``kl_core.sequences.gradients``).
URL keys: ``src``, ``K``, ``drift``, ``first``, ``pol``, ``ref``, ``T``, ``n``, ``seed``, ``beta``
(without ``src``: the sticky pair, or the drift family if ``K``, ``drift`` or ``first`` is set).
"""

import streamlit as st

from charts.sequences import (
    cosine_bars,
    gradient_bars,
    penalty_chart,
    per_position_chart,
    relative_std_chart,
)
from i18n import _
from kl_core.sequences import estimators as sequences
from kl_core.sequences import gradients as sequence_gradients
from kl_core.sequences.markov import check_pair
from lab import cache, state, ui
from lab.format import number
from lab.grids import log_grid
from lab.notes import sequences as notes
from lab.widgets import count_slider, page_opening, seed_picker

first = page_opening(_("Tokens & sequences"), _(  # first; its container holds the answer (see lab.widgets)
    "A language model's KL penalty is a KL between whole **sequences**, estimated from the tokens "
    r"of the sampled ones. Two Markov chains over K tokens stand in for the policy $\pi_\theta$ and "
    r"the reference $\pi_\mathrm{ref}$, small enough that every figure is also known **exactly**. "
    "**A sequence's KL is the sum of its positions' KLs: is its gradient then the gradient of a "
    "per-token KL loss?**"
), mapping="theta", more=_("$t$ is a token's position, 1 to $T$."))

# ------------------------------------------------------------ the chains
if (link_src := notes.link_source(st.query_params)) is not None:  # an older link: K, drift, no src
    st.query_params["src"] = link_src
st.subheader(_("Change the chains and T"))
source = state.segmented(
    _("Chains"), "src", notes.SOURCES, value=notes.DEFAULT_SOURCE, help=notes.source_help(),
)
custom = notes.CUSTOM_DEFAULT
drift_specs = ("", "")
if source == "sticky":
    st.markdown(notes.sticky_text())
elif source == "drift":
    c_k, c_d, c_f = st.columns([1, 1, 1], gap="medium", vertical_alignment="bottom")
    with c_k:
        k = state.slider(_("K, tokens in the vocabulary"), "K", min_value=2, max_value=notes.K_MAX,
                         value=notes.DEFAULT_K, step=1)
    with c_d:
        drift = state.slider(_(r"Drift $\delta$ of $\pi_\theta$ away from $\pi_\mathrm{ref}$"), "drift",
                             min_value=0.0, max_value=3.0, value=0.5, step=0.05, format="%.2f",
                             help=_(notes.DRIFT_HELP))
    with c_f:
        first_only = state.toggle(_("First token only"), "first",
                                  help=_("Drift in the first token only. Off: the tilt acts in every "
                                         "transition, so for δ > 0 the KL grows with T. On: only the "
                                         "first token drifts."))
    drift_specs = cache.drift_specs(k, drift, "first" if first_only else "every")
elif source == "custom":
    custom = (
        state.text(_(r"$\pi_\theta$, the policy that samples"), "pol", value=notes.CUSTOM_DEFAULT[0],
                   help=_("markov(a1,…,aK; b11,…,b1K; …; bK1,…,bKK): first-token logits, "
                          "then one row of next-token logits per token.")),
        state.text(_(r"$\pi_\mathrm{ref}$, the reference"), "ref", value=notes.CUSTOM_DEFAULT[1]),
    )
else:
    counter_text = st.empty()  # filled once T is chosen: the two stds at this T
try:
    policy, ref = check_pair(*notes.chains(source, drift_specs, custom))
except ValueError as exc:
    ui.fail(_("**These chains can't be used.** {why}").format(why=ui.error_text(exc)))
length = int(state.select_slider(
    _("T, tokens per sequence"), "T", notes.LENGTHS, value=notes.DEFAULT_LENGTH,
    off_grid=notes.length_from_link, allowed=_("a whole number from 1 to {t}").format(t=notes.MAX_LENGTH),
    help=_("Log-scale steps; the exact lines below cover every T from 1 to {t}.").format(t=notes.MAX_LENGTH),
))
with state.notes_below(), st.expander(_("More settings: N, seed, the chains as specs and the command line"),
                 icon=":material/tune:"):
    c_n, c_s = st.columns([2, 1], gap="medium")
    with c_n:
        n = count_slider(_("N, sequences sampled"), "n", value=1_000, hi=100_000,
                         help=_(r"Monte Carlo sequences drawn from $\pi_\theta$ for the circles and dots below."))
    with c_s:
        seed = seed_picker()
    n_used, n_note = notes.sample_size(n, length)
    pol_spec, ref_spec = policy.spec, ref.spec
    st.code(notes.command_line(pol_spec, ref_spec, length, n_used, seed), language="bash", wrap_lines=True)
if n_note:
    st.info(n_note, icon=":material/speed:")
curves = cache.sequence_curves(pol_spec, ref_spec, notes.MAX_LENGTH)
if source == "counter":
    counter_text.markdown(notes.counterexample_text(curves, length))
sample = cache.sequence_sample(pol_spec, ref_spec, length, n_used, seed, notes.checkpoints(length))
table = cache.sequence_gradient_table(pol_spec, ref_spec, length) if policy.k >= 2 else None
with first:
    if table is None:
        st.info(_("A chain over one token has nothing to learn: use K ≥ 2 for the gradients."),
                icon=":material/info:")
    else:
        ui.answer(notes.answer(table, curves.per_position_kl[:length]))
        labels, cosines, colors = notes.cosine_data(table)
        ui.chart(cosine_bars(labels, cosines, colors, x_title=_("cosine to the true gradient"),
                             none_text=_("0: no direction")),
                 name=_("gradient-cosines-T{t}").format(t=length), caption=notes.gradient_caption(table))

# ------------------------------------------------------------ 1. KL along the sequence
st.header(_("1. The KL of a sequence is the sum of its positions' KLs"))
ui.formula(
    r"\begin{gathered}\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \sum_{t=1}^{T} "
    r"\mathbb{E}_{x_{<t}\sim\pi_\theta}\,\kappa(x_{<t}), \\ "
    r"\kappa(x_{<t}) = \mathrm{KL}\big[\pi_\theta(\cdot\mid x_{<t})\,\big\|\,"
    r"\pi_{\mathrm{ref}}(\cdot\mid x_{<t})\big]\end{gathered}"
)
st.markdown(notes.rb_definition())
kl, kl_per_token, kl_reverse = notes.kl_at(curves, length)
with ui.metric_row():
    st.metric(notes.KL_SEQUENCE, number(kl),
              help=_("The KL of sequences of length T = {t}: exact, by the chain rule "
                     "(`kl_core.sequences.markov.per_position_kl`).").format(t=length))
    st.metric(_("per token, KL / T"), number(kl_per_token))
    st.metric(notes.KL_OTHER, number(kl_reverse), help=_("The other direction, for comparison."))
    st.metric(_("rb, sampled"), number(sample.summary("rb").mean),
              help=_("The mean of rb over {n:,} sampled sequences, ± its standard error.").format(n=n_used),
              delta=_("± {se} (SE)").format(se=number(sample.summary("rb").se)),
              delta_color="off", delta_arrow="off")
terms = {"k1": sample.position_mean["k1"], "rb": sample.position_mean["rb"]}
ui.chart(
    per_position_chart(curves.per_position_kl[:length], terms,
                       {k: sample.position_se[k] for k in terms},
                       {"k1": _("k1, sampled"), "rb": _("rb, sampled")}),
    name=_("per-position-kl-T{t}").format(t=length),
    caption=notes.position_caption(curves, length),
)

# ------------------------------------------------------------ 2. spread against T
st.header(_("2. Which estimator stays usable as T grows?"))
st.markdown("\n".join(f"- {notes.estimator_line(key)}" for key in sequences.SEQUENCE_ESTIMATORS))
ui.chart(
    relative_std_chart(curves.lengths, {k: curves.relative_std(k) for k in notes.CURVE_KEYS},
                       {k: k for k in notes.CURVE_KEYS},
                       notes.mc_points(sample, curves), current=length),
    name=_("relative-std-T{t}").format(t=length),
    caption=notes.relative_std_caption(curves, length, n_used),
)
for note in (notes.rb_note(curves), notes.unreliable_note(curves, length, n_used)):
    if note is not None:
        ui.note(note.kind, note.text, note.icon)
ui.table(notes.report_rows(curves, sample, length), name=_("sequence-estimators-T{t}").format(t=length),
         caption=_("All six at T = {t}, per sequence: exact beside {n:,} sampled sequences (seed "
                   "{seed}). mean_k3 has Σk3's spread divided by T, so the same relative spread."
                   ).format(t=length, n=n_used, seed=seed),
         column_config={c: st.column_config.NumberColumn(format="%.5g")
                        for c in (_("exact mean"), _("exact std"), _("MC mean"), _("± SE"), _("MC std"))})
ui.show_source(sequences.exact_curves)

# ------------------------------------------------------------ 3. sum against mean
st.header(_("3. Sum against mean: what a per-token average does to β"))
st.markdown(_(
    "Training code adds β times a per-token KL estimate to each token's loss, then reduces the "
    "tokens to one number. A **sum** over a sequence's tokens estimates the sequence KL; a "
    "**mean** estimates KL / T. The same samples, both ways:"
))
beta = state.select_slider(_("β, the KL coefficient as configured"), "beta", log_grid(0.001, 1.0),
                           value=0.05, format_func=lambda b: f"{b:g}")
s3, m3 = sample.summary("sum_k3"), sample.summary("mean_k3")
with ui.metric_row():
    st.metric(_("Σk3, mean over sequences"), number(s3.mean),
              delta=_("± {se} (SE); KL = {kl}").format(se=number(s3.se), kl=number(kl)),
              delta_color="off", delta_arrow="off")
    st.metric(_("mean k3 per token"), number(m3.mean),
              delta=_("± {se} (SE); KL / T = {kl}").format(se=number(m3.se), kl=number(kl_per_token)),
              delta_color="off", delta_arrow="off")
if (note := notes.sum_k3_note(curves, length, n_used, sample)) is not None:
    ui.note(note.kind, note.text, note.icon)
ui.table(notes.sum_mean_rows(beta, length, kl, sample), name=_("sum-mean-T{t}").format(t=length),
         caption=notes.sum_mean_caption(beta, length),
         column_config={c: st.column_config.NumberColumn(format="%.4g") for c in (
             _("coefficient on the sequence KL"), _("penalty, exact"), _("penalty from the samples"), _("± SE"))})
with st.expander(_("Which library option reduces the loss which way"), icon=":material/menu_book:"):
    st.markdown(notes.usage_lines())
    st.caption(_("As read in verl 0.9.1 (agg_loss) and TRL 1.16.0 (GRPOTrainer); see kl_core.libraries.loss_aggregation."))
penalties, penalty_colors = notes.penalty_curves(beta, curves)
ui.chart(penalty_chart(curves.lengths, penalties, penalty_colors, current=length),
         name=_("penalty-beta{beta}").format(beta=f"{beta:g}"), caption=notes.penalty_caption(curves, length))

# ------------------------------------------------------------ 4. the gradient
st.header(_("4. The gradient of a sequence: which per-token losses miss the later prefixes?"))
st.markdown(notes.gradient_intro(source, table))
ui.formula(notes.gradient_formula())
st.markdown(notes.gradient_terms(table is not None))
if table is None:
    st.stop()
gradient_df = notes.gradient_rows(table)
ui.table(gradient_df, name=_("sequence-gradients-T{t}").format(t=length),
         caption=_(r"Every option's exact expected gradient at T = {t}, sequences drawn from "
                   r"$\pi_\theta$.").format(t=length),
         column_config={c: st.column_config.NumberColumn(format="%.4f")
                        for c in notes.gradient_number_columns(gradient_df)})
cats, series, bar_colors, shown = notes.first_token_series(table)
ui.chart(gradient_bars(cats, series, bar_colors, x_title=_("first-token logit")),
         name=_("first-token-gradient-T{t}").format(t=length), caption=notes.first_token_caption(table, shown))
ui.show_source(sequence_gradients._later)
