"""lab.notes.sequences: the captions, notes and table rows follow the core's numbers."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import shlex

import numpy as np
import pytest

import i18n
from kl_core.cli import main as cli
from kl_core.libraries.loss_aggregation import LOSS_AGGREGATIONS
from kl_core.sequences.estimators import (
    RB_COUNTEREXAMPLE,
    SEQUENCE_KEYS,
    exact_curves,
    rare_sequences,
)
from kl_core.sequences.gradients import OPTIONS, sequence_gradient_table
from kl_core.sequences.markov import drift_pair, parse_markov, per_position_kl
from kl_core.sequences.montecarlo import simulate_sequences
from lab.format import number
from lab.notes import sequences as notes

DRIFT = tuple(c.spec for c in drift_pair(8, 0.5))
FIRST = tuple(c.spec for c in drift_pair(8, 0.5, "first"))
SAME = tuple(c.spec for c in drift_pair(4, 0.0))


@pytest.fixture(scope="module")
def drift_curves():
    return exact_curves(*DRIFT, notes.MAX_LENGTH)


@pytest.fixture(scope="module")
def counter_curves():
    return exact_curves(*RB_COUNTEREXAMPLE, notes.MAX_LENGTH)


def test_grids_and_budget():
    assert notes.LENGTHS[0] == 1 and notes.LENGTHS[-1] == notes.MAX_LENGTH == 256
    assert notes.DEFAULT_LENGTH in notes.LENGTHS
    assert notes.checkpoints(100) == (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 100)
    assert notes.checkpoints(1) == (1,)
    assert notes.length_from_link("100") == 100
    for bad in ("0", "257", "2.5", "abc"):
        assert notes.length_from_link(bad) is None
    assert notes.sample_size(1000, 64) == (1000, None)
    n, note = notes.sample_size(100_000, 256)
    assert n == notes.MAX_TOKENS_PER_RUN // 256 == 10_000
    assert "25,600,000" in note and "N = 10,000" in note
    assert n * 256 <= notes.MAX_TOKENS_PER_RUN


def test_sources():
    assert notes.chains("drift", DRIFT, SAME) == DRIFT
    assert notes.chains("counter", DRIFT, SAME) == RB_COUNTEREXAMPLE
    assert notes.chains("custom", DRIFT, SAME) == SAME
    with pytest.raises(ValueError, match="source"):
        notes.chains("mine", DRIFT, SAME)
    assert notes.CUSTOM_DEFAULT == tuple(c.spec for c in drift_pair(3, 0.5))


def test_the_command_line_gives_the_pages_numbers(drift_curves):
    """The copyable command, run through kl_core's own CLI, prints the same exact and MC figures."""
    cmd = notes.command_line(*DRIFT, 16, 300, 4)
    argv = shlex.split(cmd)
    assert argv[:5] == ["uv", "run", "python", "-m", "kl_core"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main([*argv[5:], "--json"]) == 0
    got = json.loads(out.getvalue())
    assert got["true_kl"] == pytest.approx(float(drift_curves.true_kl[15]), rel=1e-12)
    sample = simulate_sequences(*DRIFT, 16, 300, seed=4)
    rows = {r["name"]: r for r in got["rows"]}
    for key in SEQUENCE_KEYS:
        assert rows[key]["mc_mean"] == pytest.approx(sample.summary(key).mean, rel=1e-12)
        assert rows[key]["exact_std"] == pytest.approx(float(drift_curves.std[key][15]), rel=1e-12)


def test_position_captions(drift_curves, counter_curves):
    c = drift_curves.per_position_kl[:64]
    text = notes.position_caption(drift_curves, 64)
    assert number(float(c.min())) in text and number(float(c.max())) in text
    assert number(float(c.sum())) in text
    first = exact_curves(*FIRST, 32)
    assert "Only the first token differs" in notes.position_caption(first, 32)
    assert number(float(first.true_kl[0])) in notes.position_caption(first, 32)
    assert "One token" in notes.position_caption(drift_curves, 1)
    assert "Every position adds the same KL, 0.5" in notes.position_caption(counter_curves, 64)
    assert "At T = 8 the two chains give every sequence the same probability" in notes.position_caption(exact_curves(*SAME, 8), 8)


def test_mc_points_are_std_over_kl_with_two_se(drift_curves):
    sample = simulate_sequences(*DRIFT, 16, 500, seed=2, checkpoints=notes.checkpoints(16))
    points = notes.mc_points(sample, drift_curves)
    assert {p.length for p in points} == set(notes.checkpoints(16))
    assert {p.key for p in points} == set(notes.CURVE_KEYS)
    p = next(p for p in points if p.key == "sum_k1" and p.length == 16)
    s = sample.checkpoints[16]["sum_k1"]
    kl = float(drift_curves.true_kl[15])
    assert p.value == pytest.approx(s.std / kl, rel=1e-12)
    assert p.high - p.low == pytest.approx(4 * s.std_se / kl, rel=1e-9)
    # the exact relative std lies within the bars of the well-behaved estimators (4 SE, not 2)
    for q in points:
        if q.key != "seq_k3" and q.length == 16:
            exact = float(drift_curves.relative_std(q.key)[15])
            assert abs(q.value - exact) <= (q.high - q.low), q


def test_relative_std_caption(drift_curves, counter_curves):
    text = notes.relative_std_caption(drift_curves, 64, 1000)
    sd1, sdrb = float(drift_curves.std["sum_k1"][63]), float(drift_curves.std["rb"][63])
    assert number((sd1 / sdrb) ** 2) + " times fewer sequences" in text
    assert number(float(drift_curves.relative_std("rb")[63])) in text
    leaves = int(np.argmax(drift_curves.relative_std("seq_k3") > 100)) + 1
    assert f"from T = {leaves} on" in text
    # seq_k3 at 11.6 × KL, but E[R²] = e^{log_r2} is small: 1,000 draws meet its rare sequences, so no claim
    # that they miss them (it said "N draws mostly miss them" whatever N)
    assert "Its sample std" not in text
    assert "Its sample std" not in notes.relative_std_caption(drift_curves, 8, 1000)
    assert "rb is the noisier one" in notes.relative_std_caption(counter_curves, 64, 1000)
    assert "rb has no noise" in notes.relative_std_caption(drift_curves, 1, 1000)
    assert "At T = 8 the two chains give every sequence the same probability" in notes.relative_std_caption(exact_curves(*SAME, 8), 8, 1000)


def test_rb_note_is_honest(drift_curves, counter_curves):
    info = notes.rb_note(drift_curves)
    assert info.kind == "info" and "not guaranteed" in info.text and "rb counterexample" in info.text
    ratio = (drift_curves.std["sum_k1"][1:] / drift_curves.std["rb"][1:]) ** 2
    assert number(float(ratio.min())) in info.text and number(float(ratio.max())) in info.text
    warn = notes.rb_note(counter_curves)
    assert warn.kind == "warning" and "noisier than Σk1" in warn.text
    worse = counter_curves.lengths[counter_curves.std["rb"] > counter_curves.std["sum_k1"]]
    assert f"for T from {worse[0]} to {worse[-1]}" in warn.text
    assert "no noise" in notes.rb_note(exact_curves(*FIRST, 16)).text


def test_unreliable_note(drift_curves, counter_curves):
    assert notes.unreliable_note(drift_curves, 16, 1000) is None  # seq_k3 at 2.6 × KL
    late = notes.unreliable_note(drift_curves, 64, 1000)  # seq_k3 at 11.6 × KL, as the CLI notes
    se = float(drift_curves.relative_std("seq_k3")[63]) / 1000 ** 0.5
    assert se > notes.NOTED_RELATIVE_SE
    assert late.kind == "warning" and "1 Monte Carlo mean has a standard error above 0.1 times the KL" in late.text
    assert "sum_k1" not in late.text and "it can land far" in late.text
    assert f"(seq_k3: {number(se)} times the KL)" in late.text
    assert "understates the true one" not in late.text  # it can, not must (a run's std can be high)
    # at N = 100,000 the same spread is a standard error of 3.7% of the KL: "far from the exact value" was false
    assert float(drift_curves.relative_std("seq_k3")[63]) / 100_000 ** 0.5 < notes.NOTED_RELATIVE_SE
    assert notes.unreliable_note(drift_curves, 64, 100_000) is None
    counter = notes.unreliable_note(counter_curves, 64, 1000)
    assert "2 Monte Carlo means have standard errors" in counter.text and "N = 1,000" in counter.text
    assert "(sum_k3: " in counter.text and "; seq_k3: " in counter.text
    assert notes.unreliable_note(exact_curves(*SAME, 8), 8, 1000) is None


def test_report_rows_are_the_core_figures(drift_curves):
    sample = simulate_sequences(*DRIFT, 12, 200, seed=1)
    df = notes.report_rows(drift_curves, sample, 12)
    assert list(df["estimator"]) == list(SEQUENCE_KEYS)
    for _, row in df.iterrows():
        s = sample.summary(row["estimator"])
        assert row["exact mean"] == float(drift_curves.mean[row["estimator"]][11])
        assert row["MC mean"] == s.mean and row["± SE"] == s.se


def test_sum_mean_rows_put_beta_over_t_on_the_sequence_kl(drift_curves):
    sample = simulate_sequences(*DRIFT, 32, 300, seed=5)
    kl = float(drift_curves.true_kl[31])
    df = notes.sum_mean_rows(0.1, 32, kl, sample).set_index("reduction (verl loss_agg_mode)")
    assert list(df.index) == list(LOSS_AGGREGATIONS)
    coef = df["coefficient on the sequence KL"]
    assert coef["token-mean"] == pytest.approx(0.1 / 32) == coef["seq-mean-token-mean"]
    assert coef["seq-mean-token-sum"] == pytest.approx(0.1)
    assert coef["seq-mean-token-sum-norm"] == pytest.approx(0.1 / notes.MAX_LENGTH)
    assert np.allclose(df["penalty, exact"], coef * kl)
    s3 = sample.summary("sum_k3")
    assert np.allclose(df["penalty from the samples"], coef * s3.mean)
    assert np.allclose(df["± SE"], coef * s3.se)
    assert "penalty from the samples" not in notes.sum_mean_rows(0.1, 32, kl, None)
    assert "β/T = 0.003125" in notes.sum_mean_caption(0.1, 32)
    for key in LOSS_AGGREGATIONS:
        assert f"`{key}`" in notes.usage_lines()


def test_penalty_curves_and_caption(drift_curves):
    curves, colors = notes.penalty_curves(0.1, drift_curves)
    total, mean, norm = curves.values()
    assert np.allclose(total, 0.1 * drift_curves.true_kl)
    assert np.allclose(mean, 0.1 * drift_curves.true_kl / drift_curves.lengths)
    assert np.allclose(norm, 0.1 * drift_curves.true_kl / notes.MAX_LENGTH)
    assert set(colors) == set(curves)
    assert "grows with T" in notes.penalty_caption(drift_curves, 64)
    # the page's default chains: the per-token mean grows about 12× (it was "stays about flat")
    sticky = exact_curves(*notes.STICKY, notes.MAX_LENGTH)
    text = notes.penalty_caption(sticky, 16)
    kl, t = sticky.true_kl, sticky.lengths
    growth = (kl[-1] / t[-1]) / (kl[0] / t[0])
    assert growth > 10 and f"the per-token mean changes by a factor of {number(growth)}:" in text
    assert f"grows {number(kl[-1] / kl[0])} times" in text and "flat" not in text
    first = exact_curves(*FIRST, notes.MAX_LENGTH)
    assert "0.01562 times the summed one" in notes.penalty_caption(first, 64)


@pytest.fixture(scope="module")
def drift_table():
    return sequence_gradient_table(*DRIFT, 64)


def test_gradient_rows(drift_table):
    df = notes.gradient_rows(drift_table)
    assert list(df["option"]) == list(OPTIONS.values())
    assert list(df["later prefixes"]) == ["missed"] * 4 + ["included"]
    one = notes.gradient_rows(sequence_gradient_table(*DRIFT, 1))  # T = 1: no later prefix
    assert list(one["later prefixes"]) == ["none to miss"] * 4 + ["included"]
    assert df["cos to ∇KL[π_θ‖π_ref]"].iloc[0] == "—"  # Σk1 loss: zero gradient
    assert df["cos to ∇KL[π_θ‖π_ref]"].iloc[-1] == "1.0000"
    assert df["in expectation it is"].iloc[-1].startswith("∇KL[π_θ‖π_ref]")
    assert df["‖g − ∇KL‖ / ‖∇KL‖"].iloc[-1] < 1e-12
    assert df["‖g‖ / ‖∇KL‖"].iloc[-1] == pytest.approx(1.0, rel=1e-12)
    assert df["‖g‖ / ‖∇KL‖"].iloc[1] == drift_table.row["sum_k2_loss"].grad.norm / drift_table.reverse.norm


def test_cosines_and_first_token_bars(drift_table):
    labels, cosines, colors = notes.cosine_data(drift_table)
    assert labels == list(OPTIONS.values())
    assert cosines[0] is None and cosines[-1] == pytest.approx(1.0)
    assert len(set(colors)) == len(colors)
    cats, series, bar_colors, shown = notes.first_token_series(drift_table)
    assert cats == [f"a{i}" for i in range(8)] and "all K = 8" in shown
    true, local, later, k3 = series.values()
    assert np.allclose(true, local + later, atol=1e-15)
    assert set(bar_colors) == set(series)
    big = sequence_gradient_table(*(c.spec for c in drift_pair(40, 0.5)), 8)
    cats, series, _, shown = notes.first_token_series(big)
    assert len(cats) == notes.MAX_BAR_TOKENS and "16 of K = 40" in shown
    chosen = [int(c[1:]) for c in cats]
    assert chosen == sorted(chosen)
    rest = np.delete(np.abs(big.reverse.first), chosen)
    assert np.abs(big.reverse.first[chosen]).min() >= rest.max()


def test_gradient_captions(drift_table):
    text = notes.gradient_caption(drift_table)
    assert f"{drift_table.later_share:.1%}" in text and "72 logits" in text
    assert f"{drift_table.row['sum_k2_loss'].cos_reverse:.4f}" in text
    ratio = drift_table.row["sum_k2_loss"].grad.norm / drift_table.reverse.norm
    assert f"and {number(ratio)} times the true gradient's length" in text
    assert "grey bars are what" in notes.first_token_caption(drift_table, "x")
    first = sequence_gradient_table(*FIRST, 16)
    assert "vanish" in notes.gradient_caption(first)
    assert "no grey bars" in notes.first_token_caption(first, "x")
    counter = sequence_gradient_table(*RB_COUNTEREXAMPLE, 64)
    assert counter.row["sum_k2_loss"].cos_reverse < 0
    assert "point against the true gradient" in notes.gradient_caption(counter)
    flat = sequence_gradient_table(*RB_COUNTEREXAMPLE, 2)  # a stationary point of the sequence KL
    assert flat.reverse.norm < 1e-9 * flat.local.norm
    assert "cancel" in notes.gradient_caption(flat)
    assert "is 0 here" in notes.first_token_caption(flat, "x")
    assert number(flat.local.norm) in notes.gradient_caption(flat)
    same = sequence_gradient_table(*SAME, 8)
    assert all("the same probability" in text for text in (notes.gradient_caption(same), notes.first_token_caption(same, "x")))


def test_labels():
    assert notes.estimator_label("rb") == "rb: Rao–Blackwellized"
    assert notes.estimator_label("seq_k3") == "seq_k3: k3 of the sequence ratio"


def test_kl_at(drift_curves):
    kl, per_token, reverse = notes.kl_at(drift_curves, 64)
    assert kl == float(drift_curves.true_kl[63]) and per_token == kl / 64
    assert reverse == float(drift_curves.true_kl_reverse[63])


def test_the_counterexample_text_names_the_noisier_from_the_stds():
    import i18n

    curves = exact_curves(*RB_COUNTEREXAMPLE, notes.MAX_LENGTH)
    assert notes.counterexample_text(curves, 1).endswith("At T = 1 the std of Σk1 is 0.5 and rb's is 0: here Σk1 is "
                                                         "the noisier.")
    assert notes.counterexample_text(curves, 8).endswith("At T = 8 the std of Σk1 is 3 and rb's is 3.5: rb is the "
                                                         "noisier.")
    assert "T ≥ 2" in notes.source_help()
    with i18n.using("zh"):
        zh = notes.counterexample_text(curves, 8)
    assert zh.startswith("**反例**") and zh.endswith("在 T = 8 时，Σk1 的标准差为 3，rb 的为 3.5：rb 噪声更大。")


# ---------------------------------------------------------------- issue 20: the answer first


def test_the_sticky_pair_is_the_default_and_its_text_reads_its_chains():
    assert notes.DEFAULT_SOURCE == "sticky" and list(notes.SOURCES)[0] == "sticky"
    assert notes.chains("sticky", DRIFT, SAME) == notes.STICKY
    policy, ref = (parse_markov(s) for s in notes.STICKY)
    assert policy.k == ref.k == 2
    np.testing.assert_allclose(ref.transition_probs, [[0.3, 0.7], [0.3, 0.7]])
    np.testing.assert_allclose(policy.transition_probs, [[0.99, 0.01], [0.1, 0.9]])
    text = notes.sticky_text()
    for words in ("probability 30%.", "first with probability 50%", "rarely (10%)", "repeats it (99%)"):
        assert words in text


def test_the_answer_at_the_default_quotes_the_cores_numbers():
    table = sequence_gradient_table(*notes.STICKY, notes.DEFAULT_LENGTH)
    c = per_position_kl(*notes.STICKY, notes.DEFAULT_LENGTH)
    text = notes.answer(table, c)
    k2, k3 = table.row["sum_k2_loss"].cos_reverse, table.row["sum_k3_loss"].cos_reverse
    assert text.startswith(f"At T = {notes.DEFAULT_LENGTH} the sequence KL, {number(float(c.sum()))}, ")
    assert f"from {number(float(c.min()))} to {number(float(c.max()))}" in text
    assert "**Its gradient is not a per-token loss's**" in text
    assert f"Σ k2 as a loss has cosine {k2:.4f} and Σ k3 as a loss {k3:.4f}" in text  # as the chart prints them
    assert f"({table.later_share:.1%} of the true gradient's length)" in text
    assert text.endswith("which keeps them, has 1.0000.")


def test_the_answer_when_the_losses_agree_or_there_is_nothing_to_learn(drift_table):
    c = per_position_kl(*drift_pair(8, 0.5), drift_table.length)
    assert "nearly the right way" in notes.answer(drift_table, c)
    one = sequence_gradient_table(*notes.STICKY, 1)
    text = notes.answer(one, per_position_kl(*notes.STICKY, 1))
    assert text.startswith("At T = 1 the sequence KL is the first token's KL")
    assert "no KL is still to come" in text and "cosine 1.0000" in text
    same = sequence_gradient_table(*drift_pair(3, 0.0), 4)
    assert notes.answer(same, np.zeros(4)).startswith("At T = 4 the two chains give every sequence the same probability")
    # a negative cosine is written with a minus sign, as numbers are on the page
    counter = sequence_gradient_table(*RB_COUNTEREXAMPLE, 8)
    assert "cosine −1.0000" in notes.answer(counter, per_position_kl(*RB_COUNTEREXAMPLE, 8))


def test_rb_is_defined_and_the_formula_labels_are_translated():
    assert notes.rb_definition().startswith("**rb** (Rao–Blackwellized)")
    tex = notes.gradient_formula()
    assert r"_{\text{local: }\Sigma k_2\text{ loss}}" in tex and r"_{\text{later prefixes}}" in tex
    with i18n.using("zh"):
        zh = notes.gradient_formula()
    assert r"\text{局部: }" in zh and r"\text{ 损失}" in zh and r"\text{后续前缀}" in zh


def test_a_link_with_a_drift_widget_and_no_src_means_the_drift_family():
    assert notes.link_source(["K", "T"]) == "Drift family" == notes.SOURCES["drift"]
    assert notes.link_source(["first"]) == "Drift family"
    assert notes.link_source(["src", "K"]) is None
    assert notes.link_source(["T", "n", "seed"]) is None
    assert notes.link_source([]) is None


def test_chains_that_agree_only_up_to_t_are_not_called_identical():
    """Same first-token distribution, other transitions: the KL is 0 at T = 1 only."""
    pol = parse_markov("markov(0,0,0; 0,0,0; 0,0,0; 0,0,0)")
    ref = parse_markov("markov(0,0,0; 2,0,0; 0,2,0; 0,0,2)")
    curves = exact_curves(pol, ref, 4)
    assert curves.true_kl[0] == 0.0 and curves.true_kl[1] > 0.4
    for text in (notes.position_caption(curves, 1), notes.relative_std_caption(curves, 1, 1000)):
        assert text.startswith("At T = 1 the two chains give every sequence the same probability")
        assert "identical" not in text


def test_the_first_token_caption_credits_the_grey_bars_not_the_true_gradient(drift_table):
    """Drift family (K = 8, δ = 0.5): the true gradient's first-token part points against the
    later-prefix part (their dot product is negative), so a step against the true gradient does
    not move the first token away from tokens with more KL to come; the grey bars alone do."""
    rev, later = drift_table.reverse.first, drift_table.later.first
    assert float(rev @ later) < 0
    text = notes.first_token_caption(drift_table, "x")
    assert "against the grey bars alone" in text and "against the true gradient" not in text


def test_only_the_first_token_differs_up_to_t_is_not_for_any_t():
    pol = parse_markov("markov(0,-40; -40,0; 0,0)")
    ref = parse_markov("markov(0,-1; -40,0; 0,-3)")
    curves = exact_curves(pol, ref, notes.MAX_LENGTH)
    text = notes.position_caption(curves, 2)
    assert text.startswith("Up to T = 2 only the first token differs") and "for any T" not in text
    assert curves.true_kl[15] > 5 * curves.true_kl[1]  # 8.49 at T = 16 against 0.3133
    first = exact_curves(*FIRST, notes.MAX_LENGTH)
    assert "for any T" in notes.position_caption(first, 4)


def test_rb_noisier_at_scattered_t_is_not_said_to_be_a_stretch():
    pol = parse_markov("markov(0.2,3.3,-2.3; -2.7,0.5,3.8; 1.5,-0.4,1.1; 1.6,-3.5,-8.2)")
    ref = parse_markov("markov(-2.9,-4.3,-1.5; -3.4,-2.4,1.5; 0.5,0.2,5.2; -1.1,-0.9,4.1)")
    curves = exact_curves(pol, ref, 64)
    worse = curves.lengths[curves.std["rb"] > curves.std["sum_k1"] * (1 + 1e-12)]
    assert worse.size < worse[-1] - worse[0] + 1  # not one stretch
    text = notes.rb_note(curves).text
    assert f"at {worse.size} values of T from {worse[0]} to {worse[-1]}" in text


# ------------------------------------------------------------------ audit fixes
HUGE = ("markov(0,-30; 0,-30; 0,-30)", "markov(0,0; 0,0; 0,0)")  # E[R^2] = e^7325 at T = 256


def test_an_overflowing_variance_is_not_shown_as_an_infinite_spread():
    """Drift family, K = 64, δ = 3, T = 256: E[R^2] exceeds a double but seq_k3's std does not;
    the page said "seq_k3 ∞" and "a standard error of up to ∞ times the KL"."""
    curves = exact_curves(*drift_pair(64, 3.0), notes.MAX_LENGTH)
    rel = float(curves.relative_std("seq_k3")[-1])
    assert np.isfinite(rel) and rel > 1e190
    caption = notes.relative_std_caption(curves, 256, 1000)
    assert f"seq_k3 {number(rel)};" in caption and "∞" not in caption
    note = notes.unreliable_note(curves, 256, 1000)
    assert f"seq_k3: {number(rel / np.sqrt(1000))} times the KL" in note.text and "∞" not in note.text
    assert note.text.endswith("The exact columns are right.")


def test_a_spread_too_large_for_a_double_says_so():
    curves = exact_curves(*HUGE, notes.MAX_LENGTH)
    assert np.isinf(curves.std["seq_k3"][-1])
    caption = notes.relative_std_caption(curves, 256, 1000)
    assert "seq_k3 too large for a double" in caption and "∞" not in caption
    text = notes.unreliable_note(curves, 256, 1000).text
    assert "seq_k3: too large for a double" in text and "∞ times" not in text
    assert not text.endswith("The exact columns are right.")
    assert "right where they show a number" in text


def test_each_noisy_mean_gets_its_own_standard_error():
    """Own chains markov(0,200; 200,0; 0,200) against markov(200,0; 0,200; 200,0), T = 8: only seq_k3's standard
    error overflows a double; Σk3's is 1.5e39 times the KL, which the note called "too large for a double" too."""
    curves = exact_curves(parse_markov("markov(0,200; 200,0; 0,200)"), parse_markov("markov(200,0; 0,200; 200,0)"), 8)
    k3 = float(curves.relative_std("sum_k3")[7]) / np.sqrt(1000)
    assert np.isfinite(k3) and k3 > 1e30 and not np.isfinite(float(curves.relative_std("seq_k3")[7]))
    text = notes.unreliable_note(curves, 8, 1000).text
    assert f"sum_k3: {number(k3)} times the KL" in text and "seq_k3: too large for a double" in text


def test_a_rare_set_below_a_doubles_range_is_written_from_its_log():
    """The same chains: E[R²] = e^1600 at T = 8, so p = e^−800, which the caption printed as "p = 0"."""
    curves = exact_curves(parse_markov("markov(0,200; 200,0; 0,200)"), parse_markov("markov(200,0; 0,200; 200,0)"), 8)
    log_p = -0.5 * float(curves.log_r2[7])
    assert log_p < -745
    text = notes.relative_std_caption(curves, 8, 1000)
    exponent = math.floor(log_p / math.log(10))
    assert "at most p = " in text and f"e-{-exponent}" in text and "p = 0 " not in text
    assert "seq_k3's sample std likely falls far short" in text and "Its sample std" not in text


def test_a_growth_past_the_digits_shown_is_not_called_one_times():
    """Own chains markov(0,-3; 0,1e-4; 0,0) against a uniform reference: the KL goes from 0.5022822 to 0.5022824,
    and the caption said "the summed penalty grows 1 times"."""
    curves = exact_curves(parse_markov("markov(0,-3; 0,1e-4; 0,0)"), parse_markov("markov(0,0; 0,0; 0,0)"),
                          notes.MAX_LENGTH)
    growth = float(curves.true_kl[-1] / curves.true_kl[0])
    assert 1 + 1e-9 < growth and number(growth) == number(1.0)
    text = notes.penalty_caption(curves, 16)
    assert "grows 1 times" not in text and f"by a factor of {growth:.12g}" in text and "0.0625 times" in text


def test_rb_is_not_said_to_have_less_variance_where_the_kl_is_zero():
    """markov(0,0; 0,1; 0,0) against a uniform reference: at T = 1 the KL and both spreads are 0."""
    curves = exact_curves(parse_markov("markov(0,0; 0,1; 0,0)"), parse_markov("markov(0,0; 0,0; 0,0)"),
                          notes.MAX_LENGTH)
    assert curves.true_kl[0] == 0 and curves.std["rb"][0] == 0 == curves.std["sum_k1"][0]
    text = notes.rb_note(curves).text
    assert "less variance than Σk1 at every T from 2 on, where the KL is above 0" in text


def test_the_penalty_caption_starts_from_the_first_t_with_a_kl():
    """Own chains whose first tokens agree: KL 0 at T = 1 printed "grows ∞ times" (and warned)."""
    import warnings

    curves = exact_curves("markov(0,0;0,1;1,0)", "markov(0,0;0,0;0,0)", notes.MAX_LENGTH)
    assert curves.true_kl[0] == 0 and curves.true_kl[1] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = notes.penalty_caption(curves, 16)
    summed = curves.true_kl[-1] / curves.true_kl[1]
    assert "∞" not in text and "The KL is 0 up to T = 1" in text
    assert f"from T = 2, the first T with a KL above 0, to 256 the summed penalty grows {number(summed)} times" in text
    assert f"changes by a factor of {number(summed * 2 / 256)}:" in text
    # tokens drawn i.i.d.: the KL grows like T, the per-token mean stays put (it said "changes only 1 times")
    iid = notes.penalty_caption(exact_curves("markov(0,1;0,1;0,1)", "markov(0,0;0,0;0,0)", notes.MAX_LENGTH), 16)
    assert "the summed penalty grows 256 times" in iid and "per-token mean does not change" in iid
    assert "factor" not in iid
    # from T = 1 as before when the first tokens differ
    assert "from T = 1 to 256" in notes.penalty_caption(exact_curves(*DRIFT, notes.MAX_LENGTH), 16)


def test_what_sum_k2_and_mean_k3_estimate_is_true_when_the_chains_agree():
    curves = exact_curves(*SAME, 16)
    assert not curves.true_kl.any() and not curves.mean["sum_k2"].any() and not curves.mean["mean_k3"].any()
    assert "in general not the KL (both are 0 when the chains agree)" in notes.SUMMARIES["sum_k2"]
    assert "the KL only at T = 1 or where the KL is 0" in notes.SUMMARIES["mean_k3"]
    assert notes.SUMMARIES["sum_k2"].endswith("agree).") and "not the KL." not in notes.SUMMARIES["sum_k2"]


def test_with_the_first_token_only_the_next_token_kls_are_not_called_the_same_number():
    """First token only: κ is 0.05 at position 1 and 0 after; "every prefix's next-token KL is the
    same number" was false, "at each position every prefix has the same" holds."""
    policy, ref = drift_pair(4, 0.5, "first")
    curves = exact_curves(policy, ref, 16)
    assert curves.per_position_kl[0] > 0 and not curves.per_position_kl[1:].any()
    assert curves.std["rb"][-1] == 0
    for text in (notes.relative_std_caption(curves, 16, 1000), notes.rb_note(curves).text,
                 notes.gradient_caption(sequence_gradient_table(policy, ref, 16))):
        assert "same number" not in text
    assert "at each position, every prefix has the same next-token KL" in notes.relative_std_caption(curves, 16, 1000)
    assert "does not depend on which token it is" in notes.gradient_caption(sequence_gradient_table(policy, ref, 16))


def test_the_answers_cosines_are_printed_as_the_chart_prints_them():
    """K = 64, δ = 3, T = 256: Σk2's cosine is 0.9954, which the answer printed as "1.00" beside "they miss
    the terms from later prefixes", while the chart's bar read 0.9954."""
    table = sequence_gradient_table(*drift_pair(64, 3.0), 256)
    text = notes.answer(table, per_position_kl(*drift_pair(64, 3.0), 256))
    c2 = table.row["sum_k2_loss"].cos_reverse
    assert round(c2, 2) == 1.0 and c2 < 0.999
    assert f"has cosine {c2:.4f}" in text and "cosine 1.00 " not in text


def test_a_length_with_zero_kl_is_not_where_seq_k3_leaves():
    """Custom chains markov(0,0;0,1;0,0) against markov(0,0;0,0;0,0): KL = 0 at T = 1 (std / KL is
    NaN), which counted as "above": "passes 100 times the KL from T = 1 on" beside seq_k3 1.407 at T = 2."""
    curves = exact_curves("markov(0,0;0,1;0,0)", "markov(0,0;0,0;0,0)", notes.MAX_LENGTH)
    assert curves.true_kl[0] == 0.0
    r = curves.relative_std("seq_k3")
    text = notes.relative_std_caption(curves, 2, 1000)
    assert "seq_k3 1.407" in text and "from T = 1 on" not in text
    t = int(text.split("passes 100 times the KL from T = ")[1].split(" ")[0])
    assert r[t - 2] <= 100 < r[t - 1] and (r[t - 1:] > 100).all()  # above from t on, not before


def test_the_rare_sequences_sentence_follows_n_and_e_r2():
    """Drift family K = 2, δ = 2.3, T = 1: a token of probability 0.005 carries seq_k3's variance (11.5 × KL),
    and 1,000 draws meet it about 5 times; "N draws mostly miss them" was false. At K = 8, δ = 3, T = 64
    the rare set has probability below 1e-51, and the sentence gives the bound."""
    one = exact_curves(*drift_pair(2, 2.3), 1)
    assert float(one.relative_std("seq_k3")[0]) > notes.WILD_SPREAD
    assert "Its sample std" not in notes.relative_std_caption(one, 1, 1000)
    far = exact_curves(*drift_pair(8, 3.0), 64)
    rare, hit = rare_sequences(float(far.log_r2[-1]), 1000)
    assert rare < 1e-51 and hit == pytest.approx(1000 * rare, rel=1e-9)
    text = notes.relative_std_caption(far, 64, 1000)
    assert (f"at most p = {number(rare)} carry at least 1 − p of E[R²], the term behind its variance, and "
            f"N = 1,000 draws include one with probability at most {number(hit)}.") in text



def test_the_cosine_in_the_gradient_caption_has_the_answers_minus_sign():
    # the counterexample at T = 3: the caption printed "cosine -1.0000" beside the answer's "−1.0000"
    from kl_core.sequences.estimators import RB_COUNTEREXAMPLE
    from kl_core.sequences.gradients import sequence_gradient_table

    text = notes.gradient_caption(sequence_gradient_table(*RB_COUNTEREXAMPLE, 3))
    assert "(cosine −1.0000)" in text and "-1.0000" not in text


# ------------------------------------------------------------------ audit of the page (findings 1–8)


def test_section_3_flags_sigma_k3_where_section_2_does():
    """rb counterexample, T = 16, N = 1,000: Σk3's sample mean 2.794 ± 0.08134 beside KL = 8 (about 64
    'SEs' off), shown in section 3 as trustworthy while section 2 warned about sum_k3."""
    curves = exact_curves(*RB_COUNTEREXAMPLE, 16)
    sample = simulate_sequences(*RB_COUNTEREXAMPLE, 16, 1000, seed=0)
    s3 = sample.summary("sum_k3")
    assert abs(s3.mean - float(curves.true_kl[-1])) > 50 * s3.se  # the sample's own SE hides the gap
    assert "sum_k3" in notes.unreliable_note(curves, 16, 1000).text
    note = notes.sum_k3_note(curves, 16, 1000, sample)
    se = float(curves.std["sum_k3"][-1]) / 1000 ** 0.5
    assert note.kind == "warning" and "**Σk3's sample figures are unreliable here**" in note.text
    assert f"the exact standard error of Σk3's mean is {number(se)}, {number(se / 8.0)} times the KL" in note.text
    assert f"these draws give ± {number(s3.se)}." in note.text and "N = 1,000 draws" in note.text
    # the same check as section 2's: no note where it does not flag sum_k3
    drift = exact_curves(*DRIFT, 64)
    drift_sample = simulate_sequences(*DRIFT, 64, 1000, seed=0)
    assert "sum_k3" not in notes.unreliable_note(drift, 64, 1000).text  # it flags seq_k3 only
    assert notes.sum_k3_note(drift, 64, 1000, drift_sample) is None
    same = exact_curves(*SAME, 8)
    assert notes.sum_k3_note(same, 8, 1000, simulate_sequences(*SAME, 8, 100, seed=0)) is None
    for t in (1, 2, 16, 256):  # flagged in section 3 exactly where section 2 flags sum_k3
        counter = exact_curves(*RB_COUNTEREXAMPLE, t)
        small = simulate_sequences(*RB_COUNTEREXAMPLE, t, 50, seed=0)
        flagged = (n := notes.unreliable_note(counter, t, 50)) is not None and "sum_k3" in n.text
        assert (notes.sum_k3_note(counter, t, 50, small) is not None) == flagged


def _printed(c: float | None) -> str:
    return "0 (no gradient)" if c is None else f"{c:.4f}".replace("-", "−")


def _far(c: float | None) -> bool:
    return c is None or round(c, 4) < notes.FAR_OFF


def test_the_answers_verdict_follows_sigma_k2_not_sigma_k3():
    """Drift family K = 8, δ = 2, T = 16: Σk2 0.9972, Σk3 0.8923; the answer said "Its gradient is not
    a per-token loss's … They miss the terms from later prefixes" because of Σk3, whose shortfall is
    the other KL direction."""
    pair = drift_pair(8, 2.0)
    table = sequence_gradient_table(*pair, 16)
    k2, k3 = table.row["sum_k2_loss"].cos_reverse, table.row["sum_k3_loss"].cos_reverse
    assert not _far(k2) and _far(k3)
    text = notes.answer(table, per_position_kl(*pair, 16))
    assert "not a per-token loss's" not in text
    assert "Here Σ k2 as a loss points nearly the right way: to the true gradient" in text
    assert f"it has cosine {k2:.4f}, although it misses the terms from later prefixes" in text
    assert f"Σ k3 as a loss, though, has cosine {k3:.4f}: at each prefix it follows the other KL direction" in text


def _answer_cases():
    for k in (2, 3, 8, 64):
        for drift in (0.0, 0.05, 0.5, 1.0, 2.0, 3.0):
            for where in ("every", "first"):
                yield drift_pair(k, drift, where)
    yield notes.STICKY
    yield RB_COUNTEREXAMPLE


def test_every_answer_sentence_holds_over_the_pages_ranges():
    """K 2 … 64, δ 0 … 3, T 1 … 256 (the sliders' steps), both drift kinds, the sticky pair and the
    counterexample: each verdict is the one its cosines give."""
    for pair in _answer_cases():
        for t in notes.LENGTHS:
            table = sequence_gradient_table(*pair, t)
            text = notes.answer(table, per_position_kl(*pair, t))
            if table.reverse.norm == 0:
                assert "the same probability" in text
                continue
            k2, k3 = table.row["sum_k2_loss"].cos_reverse, table.row["sum_k3_loss"].cos_reverse
            where = (pair, t, text)
            if table.reverse.norm <= 1e-6 * table.local.norm:  # flat: no cosine is quoted
                assert "Its gradient is nearly 0 here" in text, where
                continue
            assert _printed(k2) in text, where
            if "**Its gradient is not a per-token loss's**" in text:
                assert _far(k2), where
            if "points nearly the right way" in text:
                assert not _far(k2), where
            if "the per-token losses point nearly the right way" in text:
                assert not _far(k3), where
            if "though, has cosine" in text:
                assert _far(k3) and not _far(k2) and _printed(k3) in text, where
            if "which run from" in text:
                lo, hi = re.search(r"which run from (\S+) to (\S+)\. ", text).groups()
                assert lo != hi, where


def test_equal_positions_are_not_said_to_run_from_a_number_to_itself():
    """rb counterexample, T ≥ 2: every position adds 0.5; the answer said "run from 0.5 to 0.5"."""
    for t in (2, 3, 16, 256):
        c = per_position_kl(*RB_COUNTEREXAMPLE, t)
        assert np.ptp(c) <= 1e-9 * c.max()
        text = notes.answer(sequence_gradient_table(*RB_COUNTEREXAMPLE, t), c)
        assert f"is the sum of its positions' KLs: each adds {number(float(c[0]))}." in text
        assert "run from" not in text
    c = per_position_kl(*DRIFT, 16)  # positions that differ still run from … to …
    assert f"run from {number(float(c.min()))} to {number(float(c.max()))}" in notes.answer(
        sequence_gradient_table(*DRIFT, 16), c)


def test_identical_chains_get_no_rb_note_and_no_none_ratios():
    """Drift δ = 0: every estimator is exactly 0, yet the rb note said "rb has no noise … rb is not
    always better than Σk1, though"; the table's ratio columns showed None."""
    same = exact_curves(*SAME, notes.MAX_LENGTH)
    assert not same.true_kl.any()
    assert notes.rb_note(same) is None
    assert "no noise" in notes.rb_note(exact_curves(*FIRST, 16)).text  # still said where it is news
    rows = notes.gradient_rows(sequence_gradient_table(*SAME, 16))
    for col in ("‖g‖ / ‖∇KL‖", "‖g − ∇KL‖ / ‖∇KL‖"):
        assert list(rows[col]) == ["—"] * len(rows)
    assert notes.gradient_number_columns(rows) == []
    drift = notes.gradient_rows(sequence_gradient_table(*DRIFT, 16))
    assert notes.gradient_number_columns(drift) == ["‖g‖ / ‖∇KL‖", "‖g − ∇KL‖ / ‖∇KL‖"]


def test_at_t_1_the_penalty_caption_says_sum_and_mean_coincide():
    """First token only, T = 1: "at T = 1 it is 1 times the summed one, although the policy drifted
    exactly as far"."""
    first = exact_curves(*FIRST, notes.MAX_LENGTH)
    text = notes.penalty_caption(first, 1)
    assert "At T = 1 the sum and the mean coincide" in text
    assert "1 times" not in text and "drifted exactly as far" not in text
    assert "0.01562 times the summed one" in notes.penalty_caption(first, 64)  # T ≥ 2 as before


def test_section_4_points_to_the_cosine_chart_only_where_it_is_drawn():
    """One-token chains draw no cosine chart, yet section 4 said "The chart at the top of the page gives
    each option's cosine" and "(the chart at the top)"."""
    assert "chart at the top" not in notes.gradient_terms(False)
    assert "The chart at the top of the page gives each option's cosine" in notes.gradient_terms(True)
    assert notes.gradient_terms(False).startswith("with $s_t = ")
    assert "chart at the top" not in notes.gradient_intro("custom", None)
    sticky = sequence_gradient_table(*notes.STICKY, 16)
    assert "with the sticky token it can be far off (the chart at the top);" in notes.gradient_intro("sticky", sticky)
    # the chart shows the sticky token far off only where it is: not for other chains, not at T = 2 (0.9868)
    for source, table in (("drift", sequence_gradient_table(*DRIFT, 16)),
                          ("sticky", sequence_gradient_table(*notes.STICKY, 2)),
                          ("sticky", None)):
        text = notes.gradient_intro(source, table)
        assert "chart at the top" not in text and "with the sticky token it can be far off;" in text


def test_the_sticky_pairs_cosines_are_as_its_comment_says():
    """The comment on STICKY_PROBS: at T = 16 Σk2 0.08 and Σk3 0.31; on the slider both below 0.5 for
    T = 8 … 24 (it said 8 … 48: Σk3's is 0.501 at T = 32), Σk2's below 0.5 up to T = 64."""
    cos = {t: (sequence_gradient_table(*notes.STICKY, t).row["sum_k2_loss"].cos_reverse,
               sequence_gradient_table(*notes.STICKY, t).row["sum_k3_loss"].cos_reverse)
           for t in notes.LENGTHS if t <= 96}
    assert f"{cos[16][0]:.2f} {cos[16][1]:.2f}" == "0.08 0.31"
    assert [t for t, (a, b) in cos.items() if a < 0.5 and b < 0.5] == [8, 12, 16, 24]
    assert [t for t, (a, _) in cos.items() if a < 0.5] == [8, 12, 16, 24, 32, 48, 64]
    assert f"{cos[32][1]:.3f}" == "0.501"
