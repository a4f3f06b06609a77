"""Home: the RL engineer's question, the three estimators, and a live miniature.

q = N(0, 1) is the sampler, p = N(μ, 1) the target.  One slider, ``?mu=``, sets the distance; the sample size and seed are
fixed, so everyone who opens the same link sees the same numbers.
"""

import streamlit as st

from charts.histograms import common_domain, per_sample_histogram
from i18n import _
from kl_core.estimation import estimators
from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.estimators import ESTIMATORS
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.notes import home as notes
from lab.pages import PAGES, page_by_url

KEYS = ("k1", "k2", "k3")
N = 20_000
SEED = 0
Q = Gaussian(0.0, 1.0)

leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py

st.title(_("KL Estimator Lab"))
st.markdown(
    _(
        "### “How far has my policy drifted — and why is my `approx_kl` negative?”\n"
        "PPO, GRPO and RLHF training loops log a KL divergence between the policy that sampled "
        "the batch, **q**, and the policy being trained, **p**. The exact KL needs every possible "
        "action or token, so the code estimates it from the sampled ones alone, through the ratio "
        r"$r = p(x)/q(x)$ at samples $x \sim q$. Three one-line estimators are in common use: k1 "
        r"and k3 average to $\mathrm{KL}[q\|p] = \mathbb{E}_{x\sim q}[-\log r]$ exactly, k2 only "
        "about, while p is close to q; and on a single sample they behave very differently."
    )
)

# ------------------------------------------------------------ the estimators
for key, col in ui.grid(KEYS, key="formulas"):
    with col:
        ui.estimator_formula(key)
        st.markdown(_(ESTIMATORS[key].summary))

# ------------------------------------------------------------ the miniature
controls, exact_col = st.columns([3, 1], vertical_alignment="center")
with controls:
    mu = state.slider(
        _("Move p away from q: the distance μ between q = N(0, 1) and p = N(μ, 1)"),
        "mu",
        min_value=notes.MU_SLIDER.lo,
        max_value=notes.MU_SLIDER.hi,
        value=notes.MU_SLIDER.value,
        step=notes.MU_SLIDER.step,
        format="%.2f",
        help=_("q = N(0, 1) is the sampler that drew the samples, p = N(μ, 1) the target."),
    )
P = Gaussian(mu, 1.0)
true_kl = cache.exact_kl(Q.spec, P.spec)
sim = cache.simulate(Q.spec, P.spec, N, seed=SEED, keys=KEYS, sample_size=N)
moments = {key: cache.estimator_moments(key, Q.spec, P.spec) for key in KEYS}
with exact_col:
    st.metric(
        _("Exact KL[q‖p]"),
        f"{true_kl:.4g}",
        help=_("KL[q‖p] = μ²/2 for these two normals, computed by kl_core.estimation.exact.kl(q, p) in "
               "closed form."),
    )

domain = common_domain([sim[k].samples for k in KEYS], include=(0.0, true_kl))
captions = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, true_kl, mu)
for key, col in ui.grid(KEYS, key="histograms"):
    s = sim[key]
    with col:
        ui.chart(
            per_sample_histogram(
                s.samples,
                key,
                true_value=true_kl,
                mean=s.mean,
                neg_fraction=s.neg_fraction,
                domain=domain,
            ),
            name=_("{estimator}-histogram-mu-{mu}").format(estimator=key, mu=f"{mu:g}"),
            caption=captions[key],
        )
for key, col in ui.grid(KEYS, key="code"):
    with col:
        ui.show_source(getattr(estimators, key))

table = notes.estimator_table(KEYS, sim, moments, true_kl, N)
ui.table(
    table.frame,
    name=_("home-estimators-mu-{mu}").format(mu=f"{mu:g}"),
    caption=notes.table_caption(Q.name, P.name, N, SEED, moments),
    column_config={c: st.column_config.NumberColumn(format=f) for c, f in table.formats.items()},
)

# ------------------------------------------------------------ five questions
st.divider()
st.header(_("Five questions to ask of any KL number"))
QUESTIONS = notes.QUESTIONS
gradients_page = page_by_url("gradients")
for row in (QUESTIONS[:2], QUESTIONS[2:4], QUESTIONS[4:]):
    for col, (question, answer) in zip(st.columns(2, gap="medium"), row, strict=False):
        with col, st.container(border=True, height="stretch"):
            st.markdown(
                _("**{question}** {answer}").format(question=_(question), answer=_(answer))
            )
            if question == QUESTIONS[4][0]:
                st.page_link(gradients_page.path, icon=gradients_page.icon,
                             label=_("Open {title}").format(title=_(gradients_page.title)))

# ------------------------------------------------------------ where to go next
st.divider()
st.header(_("Explore"))
for page, col in ui.grid(PAGES[1:], key="pages"):  # row by row, so each row's links line up
    with col:
        # ?lang= is bound in app.py, so Streamlit carries it onto the linked page.
        st.page_link(page.path, label="**{title}**".format(title=_(page.title)), icon=page.icon)
        st.markdown(_(page.blurb))
