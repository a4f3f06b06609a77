"""lab.notes.audit: the example's exact values for its own roles, tables and captions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest

from kl_core.audit import statistics as audit
from kl_core.estimation import estimators
from lab.format import (
    PAST_DOUBLE_LOGS,
    csv_frame,
    from_log,
    past_number_columns,
    share,
    text_column,
)
from lab.notes import audit as notes

ROOT = Path(__file__).resolve().parents[2]
META = json.loads((ROOT / "data" / "example_audit.json").read_text())
ROLES = {"sc": "logp_policy", "oc": "logp_ref", "mc": "mask", "pc": "position",
         "qc": "sequence_id", "rc": None, "kc": None}


def example(direction="sampler-other"):
    table = audit.load_table(ROOT / "data" / "example_audit.csv", "logp_policy", "logp_ref",
                             mask_col="mask", position_col="position", sequence_col="sequence_id")
    return audit.audit(**table.as_kwargs(), direction=direction)


def test_the_audit_keys_are_the_old_pages():
    # the old page's keys, and kc (the exact-KL column of rb), new on this page
    assert notes.AUDIT_KEYS == ("sc", "oc", "mc", "pc", "qc", "rc", "kc", "dir")
    assert set(notes.EXAMPLE_ROLES) == set(notes.AUDIT_KEYS) - {"dir"}


def test_exact_values_only_for_the_generators_roles():
    ex = notes.exact_for(META, ROLES, "other-sampler")
    assert ex["k1"] == META["exact"]["kl_other_sampler_per_token"]
    assert ex["seq_k3"] == META["exact"]["kl_other_sampler_per_sequence"]
    assert "seq_k1" not in notes.exact_for(META, {**ROLES, "qc": None}, "sampler-other")
    assert notes.exact_for(META, {**ROLES, "mc": None}, "sampler-other") is None
    assert notes.exact_for(META, {**ROLES, "rc": "logp_policy"}, "sampler-other") is None


def test_tables_and_captions():
    rep = example()
    exact = notes.exact_for(META, ROLES, "sampler-other")
    df = notes.summary_frame(rep.summaries, exact)
    assert list(df["estimator"]) == ["k1", "k2", "k3"] and df.columns[2] == "exact mean"
    assert df.loc[2, "mean"] == rep.k3.mean
    assert "exact mean" not in notes.summary_frame(rep.summaries, None).columns
    seq = notes.summary_frame(rep.sequences.stats, exact, prefix="seq_")
    assert seq.loc[2, "exact mean"] == META["exact"]["kl_sampler_other_per_sequence"]
    pos = notes.position_rows(rep)
    assert list(pos["tokens"]) == [b.count for b in rep.positions]
    assert notes.counted_line(rep, "x.csv").startswith(
        f"**x.csv:** {rep.n:,} of {rep.n_total:,} tokens (the mask drops the rest)")
    assert "self-normalised importance sampling." in notes.summary_caption(True, True)
    # an SE from data alone says it may be too narrow (issue 11)
    assert notes.summary_caption(False, False).endswith(notes.se_caveat())
    assert notes.histogram_caption(rep, "k1", rep.sample_size()).startswith(
        f"{share(rep.k1.neg_fraction)} of tokens below 0")
    assert "200 sequences" in notes.sequences_caption(200)
    assert "bundled example" in notes.example_info(META, "example_audit.csv")


def example_with_rb(direction="sampler-other", kl_col=None):
    table = audit.load_table(ROOT / "data" / "example_audit.csv", "logp_policy", "logp_ref",
                             mask_col="mask", position_col="position", sequence_col="sequence_id",
                             kl_col=kl_col or META["kl_cols"][direction])
    return audit.audit(**table.as_kwargs(), direction=direction)


def test_rb_gets_the_exact_value_only_from_its_own_directions_column():
    for direction in audit.DIRECTIONS:
        d = direction.replace("-", "_")
        own = notes.exact_for(META, {**ROLES, "kc": META["kl_cols"][direction]}, direction)
        assert own["rb"] == own["k1"] == META["exact"][f"kl_{d}_per_token"]
        assert own["seq_rb"] == META["exact"][f"kl_{d}_per_sequence"]
        other = next(c for k, c in META["kl_cols"].items() if k != direction)
        assert "rb" not in notes.exact_for(META, {**ROLES, "kc": other}, direction)
        assert notes.kl_column_note(META, {**ROLES, "kc": META["kl_cols"][direction]}, direction) is None
        note = notes.kl_column_note(META, {**ROLES, "kc": other}, direction)
        assert f"`{other}`" in note and f"choose `{META['kl_cols'][direction]}`" in note
    assert notes.kl_column_note(META, ROLES, "sampler-other") is None  # no kc
    assert notes.kl_column_note(None, {**ROLES, "kc": "kl_ref_policy"}, "sampler-other") is None
    assert notes.kl_column_note(META, {**ROLES, "kc": "my_kl"}, "sampler-other") is None  # not the example's


def test_rb_rows_ratios_and_caption():
    rep = example_with_rb()
    exact = notes.exact_for(META, {**ROLES, "kc": "kl_policy_ref"}, "sampler-other")
    df = notes.summary_frame(rep.all_summaries, exact).set_index("estimator")
    assert list(df.index) == ["k1", "k2", "k3", "rb"]
    assert df.loc["rb", "mean"] == rep.rb.mean and df.loc["rb", "exact mean"] == exact["rb"]
    # rb is unbiased: within 4 SE of the exact KL
    assert abs(rep.rb.mean - exact["rb"]) < 4 * rep.rb.se
    # another direction's column: rb's exact mean is blank, the others stay
    mixed = notes.summary_frame(rep.all_summaries, notes.exact_for(META, ROLES, "sampler-other"))
    assert mixed["exact mean"].isna().tolist() == [False, False, False, True]
    pos = notes.position_rows(rep)
    assert list(pos.columns[-2:]) == ["rb mean", "rb SE"]
    assert "rb mean" not in notes.position_rows(example()).columns
    ratio = rep.variance_ratio
    assert ratio["k1"] == (rep.k1.std / rep.rb.std) ** 2
    caption = notes.rb_caption(rep)
    assert notes.ratio_text(ratio["k1"]) in caption and notes.ratio_text(ratio["k3"]) in caption
    assert notes.ratio_text(rep.sequences.variance_ratio["k1"]) in caption
    assert "not always" in caption and "**more**" not in caption
    assert notes.ratio_text(float("inf")) == "×∞" and notes.ratio_text(float("nan")) == "—"
    assert notes.ratio_text(None) == "—" and notes.ratio_text(250.123) == "×250.1"


def test_rb_caption_says_when_the_sums_of_rb_vary_more():
    # sequences whose k1 terms cancel within each sequence, while rb's add up (30 of them: a sequence SE needs 30)
    rep = audit.audit([-1.0, -2.0, -1.0, -2.0, -0.5, -0.5] * 10, [-2.0, -1.0, -2.0, -1.0, -0.5, -0.5] * 10,
                      sequence_ids=[i // 2 for i in range(60)], exact_kl=[0.1, 0.9, 0.2, 0.8, 0.0, 0.0] * 10)
    assert rep.sequences.variance_ratio["k1"] < 1
    assert "the sums of rb vary **more**" in notes.rb_caption(rep)


# ------------------------------------------------------------------ the verdict (issue 20 §3)

def test_the_verdict_at_the_defaults_names_the_negative_share_k3_and_rb():
    rep = example_with_rb()
    exact = notes.exact_for(META, {**ROLES, "kc": META["kl_cols"]["sampler-other"]}, "sampler-other")
    lines = notes.verdict(rep, exact)
    assert len(lines) == 3
    assert lines[0].startswith(f"**{rep.k1.neg_fraction:.1%}** of k1's per-token values are negative")
    assert abs(rep.k3.mean - exact["k3"]) <= 2 * rep.k3.se  # the example's k3 does match
    assert "**matches** the exact KL[sampler‖other]" in lines[1]
    assert f"{rep.k3.mean:.5f} ± {2 * rep.k3.se:.2g}" in lines[1] and f"{exact['k3']:.5f}" in lines[1]
    r1, r3 = rep.variance_ratio["k1"], rep.variance_ratio["k3"]
    assert r1 > 100 and r3 > 1
    assert lines[2] == (f"For the same error bar, rb needs {notes.times_text(r1)}× fewer tokens than k1, "
                        f"and {notes.times_text(r3)}× fewer tokens than k3.")


@pytest.mark.parametrize("direction", ["sampler-other", "other-sampler"])
def test_the_verdict_follows_the_numbers_in_each_direction(direction):
    rep = example_with_rb(direction)
    exact = notes.exact_for(META, {**ROLES, "kc": META["kl_cols"][direction]}, direction)
    lines = notes.verdict(rep, exact)
    within = abs(rep.k3.mean - exact["k3"]) <= 2 * rep.k3.se
    assert ("**matches**" in lines[1]) is within and ("**misses**" in lines[1]) is (not within)
    assert notes.direction_label(direction) in lines[1]


def test_a_k3_that_misses_the_exact_value_is_said_to_miss():
    rep = example()
    exact = notes.exact_for(META, ROLES, "sampler-other")
    off = {**exact, "k3": exact["k3"] + 3 * rep.k3.se}  # an exact value 3 SE away from k3's mean
    line = notes.verdict(rep, off)[1]
    assert "**misses**" in line and "matches" not in line
    assert f"by {3 * rep.k3.se:.2g}" in line
    # no rb column: the last line compares k3 with k1 instead, from their SEs
    last = notes.verdict(rep, exact)[-1]
    ratio = (rep.k1.se / rep.k3.se) ** 2
    assert last.startswith(f"For the same error bar, k3 needs {notes.times_text(ratio)}× fewer tokens than k1.")


def test_without_an_exact_value_k1_and_k3_are_compared():
    rep = example()
    line = notes.verdict(rep, None)[1]
    agree = abs(rep.k1.mean - rep.k3.mean) <= 2 * (rep.k1.se + rep.k3.se)
    # "known for this file" was false for the example read with other columns, whose exact KLs are known
    assert line.startswith("No exact value is shown for this choice of columns")
    assert ("**agree**" in line) is agree and ("**disagree**" in line) is (not agree)
    # a file where they disagree: tokens not drawn from the "sampler" (log r ≈ +0.5 on every
    # token, so E[r] ≠ 1): k1 ≈ −0.5 and k3 ≈ 0.15, each with a tiny SE
    rng = np.random.default_rng(3)
    logq = -1.0 - rng.exponential(1.0, 400)
    logp = logq + 0.5 + rng.normal(0.0, 0.01, 400)
    r = audit.audit(logq, logp)
    assert abs(r.k1.mean - r.k3.mean) > 2 * (r.k1.se + r.k3.se)
    text = notes.verdict(r, None)[1]
    assert "**disagree**" in text and "swapped columns" in text


def test_too_few_tokens_give_no_comparison_and_no_token_ratio():
    r = audit.audit([-1.0, -2.0, -0.5, -3.0], [-1.5, -1.0, -0.7, -2.0])
    small = r.sample_size()
    assert not small.se
    lines = notes.verdict(r, None, small.se)
    assert len(lines) == 2 and "too few tokens for an error bar" in lines[1]
    assert all(math.isnan(se) for _k, _m, se in notes.verdict_rows(r, small.se))


def test_no_negative_k1_is_said_so():
    r = audit.audit([-1.0, -2.0, -0.5] * 40, [-1.5, -2.5, -0.7] * 40)  # log q > log p everywhere
    assert r.k1.neg_fraction == 0
    assert notes.verdict(r, None)[0] == "None of k1's per-token values is negative in this file."


def test_times_text_and_the_clauses():
    assert notes.times_text(250.14) == "250" and notes.times_text(6.257) == "6.26"
    assert notes.times_text(1234.5) == "1,234"
    assert notes._fewer_clause(0.25, "k1") == "4× more tokens than k1"
    assert notes._fewer_clause(1.001, "k1") == "as many tokens as k1"
    assert "rb does not vary" in notes._fewer_clause(math.inf, "k1")


def test_the_columns_table_and_the_missing_columns_message():
    df = notes.columns_frame()
    assert list(df.columns) == ["column", "required", "in the example"]
    assert list(df["required"]).count("required") == 2
    assert list(df["in the example"][:2]) == ["logp_policy", "logp_ref"]
    msg = notes.missing_columns("run.csv", ["a", "b"], {"sc": None, "oc": "b"})
    assert msg.startswith("**run.csv has no column chosen for: Sampler log-prob column.**")
    assert "Its columns: `a`, `b`." in msg
    both = notes.missing_columns("x.csv", [], {"sc": None, "oc": None})
    assert "Sampler log-prob column; Other log-prob column" in both and "no columns at all" in both
    assert notes.missing_columns("x.csv", ["a"], {"sc": "a", "oc": "a"}) is None


def test_the_chinese_verdict_has_the_english_numbers():
    import re
    from collections import Counter

    from i18n import using

    number = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
    for direction, kc in (("sampler-other", True), ("other-sampler", False)):
        rep = example_with_rb(direction) if kc else example(direction)
        exact = notes.exact_for(META, {**ROLES, "kc": META["kl_cols"][direction] if kc else None}, direction)
        for ex in (exact, None):
            en = notes.verdict(rep, ex)
            with using("zh"):
                zh = notes.verdict(rep, ex)
            assert len(zh) == len(en) and zh != en
            assert Counter(number.findall(" ".join(zh))) == Counter(number.findall(" ".join(en)))


def _plain(typeset: str) -> str:
    """A page meaning written the way the core writes it (ASCII for the CLI)."""
    for fancy, plain in (("‖", "||"), ("≥", ">="), (r"$f = \tfrac12\log^2 u$", "f = 1/2 log^2 u"),
                         (r"$f = \tfrac12 u\log^2 u$", "f = 1/2 u log^2 u"), (r"$\log r$", "log r")):
        typeset = typeset.replace(fancy, plain)
    return typeset


def test_every_core_meaning_has_the_pages_typeset_wording_and_says_the_same():
    # keyed by (direction, estimator), not by the core's text: a reworded core still finds its row
    assert set(notes.MEANINGS) == {(d, k) for d, defs in audit.DEFINITIONS.items() for k in defs}
    for (direction, key), typeset in notes.MEANINGS.items():
        assert _plain(typeset) == audit.DEFINITIONS[direction][key]["meaning"], (direction, key)
        assert notes.meaning(direction, key) == typeset  # the English run shows the source text


def test_a_meaning_of_an_unknown_estimator_is_a_key_error_not_english_text():
    with pytest.raises(KeyError):
        notes.meaning("sampler-other", "k9")


# ------------------------------------------------------------------ audit findings (false sentences)

def _audit_csv(rows, header, **cols):
    """The auditor's input as an uploaded CSV, through the same loader the page uses."""
    import io

    buf = io.BytesIO((header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n").encode())
    buf.name = "audit.csv"
    return audit.load_table(buf, *header.split(",")[:2], **cols).as_kwargs()


def test_a_ratio_past_a_double_gives_k3_a_finite_mean_written_from_its_log():
    # 40 rows -1,-1 and one -800,0: r = e^800 is past a double, with 41 tokens (enough for an SE);
    # k3's mean, (e^800 − 801 + 40·0)/41 ≈ e^800/41, is finite too, and was called "infinite"
    rep = audit.audit(**_audit_csv([(-1, -1)] * 40 + [(-800, 0)], "lp,lq"))
    small = rep.sample_size()
    assert small.se and math.isinf(rep.k3.mean)
    log_mean = float(mpmath.log((mpmath.e**800 - 801) / 41))
    assert rep.k3.log_mean == pytest.approx(log_mean, rel=1e-12)
    m = from_log(log_mean, 4, trim=True)
    line = notes.verdict(rep, None, small.se)[1]
    assert line == f"k3's mean is {m}, larger than any double (so is some token's k3), so no comparison is made."
    assert m == "6.65e+345" and "too few" not in line and "infinite" not in line
    # the table shows it from its log, in the app and in the CSV, not as ∞
    df = notes.summary_frame(rep.all_summaries, None)
    assert "mean" in past_number_columns(df)
    assert text_column(df["mean"], df.attrs[PAST_DOUBLE_LOGS]["mean"])[2] == "6.65e+345"
    assert csv_frame(df)["mean"].iloc[2] == from_log(log_mean, 12)
    # r fits, but the values are too large to square: the spread is finite too, past a double
    big = audit.audit(**_audit_csv([(-1, -1)] * 40 + [(-700, 0)], "lp,lq"))
    line = notes.verdict(big, None, big.sample_size().se)[1]
    assert math.isfinite(big.k3.mean) and math.isfinite(big.k3.se)  # e^700/41 and its SE fit a double
    # the chart under the verdict: a mean past a double has no dot
    caption = notes.verdict_chart_caption(True, notes.verdict_rows(rep, True))
    assert caption.startswith("Each dot is an estimator's mean over the counted tokens; its bar spans ±2 SE. k3 has "
                              "a mean past the largest double, so it has no dot. The dashed line is the exact KL: a "
                              "bar that crosses it matches.")
    # every r finite (log r = 709): 41 values near 8e307 sum past a double, but their mean fits
    huge = audit.audit(**_audit_csv([(-709, 0)] * 41, "lp,lq"))
    assert huge.k3.mean == pytest.approx(float(mpmath.e**709 - 710), rel=1e-12)
    assert notes.mean_text(huge.k3.mean) == "8.22e+307"


def test_a_weighted_negative_share_is_called_weighted_beside_the_share_as_drawn():
    # 36 rows -1,-1.2,-1 and 4 rows -1,-0.8,-5, rollout column lr: 4 of 40 values are negative
    rep = audit.audit(**_audit_csv([(-1, -1.2, -1)] * 36 + [(-1, -0.8, -5)] * 4, "lp,lq,lr",
                                   rollout_col="lr"))
    assert rep.k1.neg_fraction > 0.5  # importance-weighted
    drawn = notes.drawn_share(rep, "k1")
    assert drawn == pytest.approx(0.1)
    line = notes.verdict(rep, None, rep.sample_size().se)[0]
    assert line.startswith(f"Weighted to the sampler, **{share(rep.k1.neg_fraction)}** of k1's")
    assert f"({share(drawn)} of the tokens as drawn)" in line
    caption = notes.histogram_caption(rep, "k1", rep.sample_size())
    assert caption.startswith(f"Weighted to the sampler, {share(rep.k1.neg_fraction)} of tokens are below 0")
    assert f"the bars count tokens as drawn (unweighted), {share(drawn)} of them below 0" in caption


def test_the_rb_caption_says_in_expectation_and_when_rb_varies_more():
    # 60 rows -1, -1-0.01*(i%3), U(0,1) with the third column as the exact-KL column
    rng = np.random.default_rng(1)
    rows = [(-1, -1 - 0.01 * (i % 3), float(rng.uniform(0, 1))) for i in range(60)]
    rep = audit.audit(**_audit_csv(rows, "lp,lq,kc", kl_col="kc"))
    assert rep.variance_ratio["k1"] < 1 and rep.variance_ratio["k3"] < 1
    caption = notes.rb_caption(rep)
    assert "In expectation it can only remove variance" in caption and "Per token it can only" not in caption
    assert "For this file rb varies **more** per token than k1 and k3." in caption
    # the example's rb column: less variance than both, so no such clause
    assert "varies **more**" not in notes.rb_caption(example_with_rb())


def test_the_kl_column_note_follows_the_chosen_log_prob_columns():
    roles = {**ROLES, "kc": "kl_policy_ref"}
    assert notes.kl_column_note(META, roles, "sampler-other") is None  # KL[policy‖ref]: the right column
    # KL[other‖sampler] is KL[ref‖policy]: kl_policy_ref is the wrong column
    note = notes.kl_column_note(META, roles, "other-sampler")
    assert note is not None and "choose `kl_ref_policy`" in note and "KL[`logp_ref`‖`logp_policy`]" in note
    same = notes.kl_column_note(META, {**roles, "oc": "logp_policy"}, "sampler-other")
    assert "which no column of the example holds" in same


def test_a_sampler_column_the_tokens_were_not_drawn_from_gets_no_column_advice():
    """Swapped columns: the advice 'choose kl_ref_policy' was false (rb 0.0341 against k1 −0.0319, k3 0.0397)."""
    swapped = {**ROLES, "sc": "logp_ref", "oc": "logp_policy", "kc": "kl_policy_ref"}
    for direction in ("sampler-other", "other-sampler"):
        note = notes.kl_column_note(META, swapped, direction)
        assert note is not None and "choose" not in note
        assert "drawn from `logp_policy`, not from `logp_ref`" in note


def test_too_few_tokens_withhold_the_position_buckets_se_too():
    # 10 tokens with a position column: the note says the per-token SEs are not shown, so
    # the position table and chart show none either
    rep = audit.audit(**_audit_csv([(-1.0, -1.0 - 0.1 * (i % 3), i) for i in range(10)], "lp,lq,pos",
                                   position_col="pos"))
    small = rep.sample_size()
    assert not small.se and "per-token SE, std, p95 and p99 are not shown" in str(small.note)
    assert any(math.isfinite(b.se["k1"]) for b in rep.positions)  # the core still has them
    rows = notes.position_rows(rep, small.se)
    assert not any(c.endswith("SE") for c in rows.columns)
    assert set(notes.position_formats(rep, small.se)) == set(rows.columns[2:])
    assert all(math.isnan(se) for b in notes.position_buckets(rep, small.se) for se in b.se.values())
    assert "±2 SE" not in notes.position_caption(small.se) and "too few tokens" in notes.position_caption(small.se)
    full = example()
    assert list(notes.position_rows(full).columns[-1:]) == ["k3 SE"]
    assert notes.position_buckets(full) == full.positions


def test_a_tiny_negative_share_is_not_printed_as_zero():
    # one negative k1 in 3,000
    rep = audit.audit(**_audit_csv([(-1.0, -1.5)] * 2999 + [(-1.5, -1.0)], "lp,lq"))
    line = notes.verdict(rep, None)[0]
    assert line.startswith(f"**{share(rep.k1.neg_fraction)}** of k1's") and "**0.0%**" not in line
    assert notes.histogram_caption(rep, "k1", rep.sample_size()).startswith(share(rep.k1.neg_fraction))
    assert share(rep.k1.neg_fraction) != "0.0%"


def test_the_direction_help_says_what_each_direction_averages():
    text = notes._(notes.DIRECTION_HELP)
    assert r"$r\,k_i(-\log r)$" in text and "weights them by $r$" not in text
    # and that is what the core computes: KL[other‖sampler]'s k_i is r·k_i(−log r)
    logr = np.linspace(-3.0, 3.0, 13)
    rep = audit.audit(np.zeros(13) - 5.0, logr - 5.0, direction="other-sampler")
    for k in ("k1", "k2", "k3"):
        assert rep.values[k] == pytest.approx(np.exp(logr) * estimators.evaluate(k, -logr), rel=1e-9, abs=1e-12)


def test_captions_without_an_se_say_no_se_and_no_bar():
    r = audit.audit([-1.0, -2.0, -0.5, -3.0], [-1.5, -1.0, -0.7, -2.0])
    small = r.sample_size()
    assert not small.se
    for has_exact in (True, False):
        caption = notes.summary_caption(has_exact, False, small.se)
        assert caption.startswith("Mean per token") and "SE" not in caption
        chart = notes.verdict_chart_caption(has_exact, notes.verdict_rows(r, small.se))
        assert "±2 SE" not in chart and "no error bar is drawn" in chart and "a bar that crosses" not in chart
    assert notes.mean_help("k1", small.se) == "Mean of k1 over the counted tokens."
    full = example()
    assert "its bar spans ±2 SE" in notes.verdict_chart_caption(True, notes.verdict_rows(full))
    assert notes.summary_caption(False, False).startswith("Mean ± SE per token.")


def test_too_few_effective_tokens_are_called_effective():
    # 201 tokens, but one rollout weight dominates: ESS 1.0
    rows = [(-1.0, -1.0 - 0.05 * (i % 5), -1.0) for i in range(200)] + [(-1.0, -1.2, -20.0)]
    rep = audit.audit(**_audit_csv(rows, "lp,lq,lr", rollout_col="lr"))
    small = rep.sample_size()
    assert rep.n == 201 and rep.ess < 2 and not small.se
    line = notes.verdict(rep, None, small.se)[1]
    assert "too few effective tokens for an error bar" in line
    assert "too few effective tokens" in notes.position_caption(small.se, rep.weighted)


def test_the_se_caveat_gives_the_simulated_coverage_not_a_typed_one():
    c = audit.se_band_coverage()
    text = notes.se_caveat()
    assert "3 runs in 5" not in text
    assert f"only {share(c.coverage)} of {c.runs:,} simulated runs" in text
    assert f"q = {c.q} and p = {c.p}, N = {c.n:,}" in text and f"±{c.z:g} SE" in text
    assert 0.5 < c.coverage < 0.7  # the auditor measured 0.58 (300 seeds) and 0.60 (3,000)


def test_a_tiny_k3_mean_is_not_printed_as_zero():
    """20 tokens, log-probs 1e-6 apart: k3's mean is about 5e-13, which '{m:.5f}' printed as 0.00000."""
    r = audit.audit([-1.0] * 20, [-1.0 + 1e-6] * 20)
    lines = notes.verdict(r, None, r.sample_size().se)
    assert "0.00000" not in lines[1] and "too few tokens" in lines[1] and "e-13" in lines[1]


def test_a_small_mean_keeps_its_digits():
    """Per-token KLs of 1e-4 are common between a policy and its rollout engine: five decimals showed 0.00012."""
    assert notes.mean_text(0.035312) == "0.03531"
    assert notes.mean_text(1.2e-4) == "0.000120"
    assert notes.mean_text(-3.3e-4) == "-0.000330"
    assert notes.mean_text(5e-13) == "5.00e-13"
    assert notes.mean_text(0.0) == "0.00000"
    assert notes.mean_text(math.inf) == "∞"
    # a file whose two columns differ by about 0.01 nats: KL ~ 5e-5; the verdict prints k1 and k3 with digits
    rng = np.random.default_rng(3)
    lp = -rng.uniform(0.5, 3.0, 400)
    rows = [(a, a + d) for a, d in zip(lp, rng.normal(0.0, 0.01, 400), strict=True)]
    rep = audit.audit(**_audit_csv(rows, "lp,lq"))
    line = notes.verdict(rep, None)[1]
    assert "0.00000" not in line and notes.mean_text(rep.k3.mean) in line and notes.mean_text(rep.k1.mean) in line


# ------------------------------------------------------------------ audit findings (round 2)

def test_a_k1_that_does_not_vary_gives_words_not_a_division_by_zero():
    """40 rows lp = lq with kl 0, 0.01, …, 0.39: Var(k1) = 0, so Var(k1)/Var(rb) = 0 and 1/ratio crashed."""
    rows = [(-1.0, -1.0, i / 100) for i in range(40)]
    rep = audit.audit(**_audit_csv(rows, "logp_policy,logp_ref,kl_policy_ref", kl_col="kl_policy_ref"))
    assert rep.variance_ratio == {"k1": 0.0, "k3": 0.0}
    lines = notes.verdict(rep, None, rep.sample_size().se)
    assert lines[2] == ("For the same error bar, rb needs more tokens than k1, which does not vary in this "
                        "file, and more tokens than k3, which does not vary in this file.")
    assert notes._fewer_clause(0.0, "k1") == "more tokens than k1, which does not vary in this file"
    assert "cannot be compared with k1's" in notes._fewer_clause(math.nan, "k1")


@pytest.mark.parametrize(("direction", "swap"), [("other-sampler", False), ("sampler-other", True)])
def test_rb_of_another_kl_gets_no_token_ratio_and_a_qualified_caption(direction, swap):
    """KL[other‖sampler] with kc = kl_policy_ref, or swapped log-prob columns: the page's own warning says the
    column is not the KL k1 and k3 estimate, so "rb needs 246× fewer tokens" and "the mean of k1 given that
    prefix" were false."""
    sc, oc = ("logp_ref", "logp_policy") if swap else ("logp_policy", "logp_ref")
    chosen = {**ROLES, "sc": sc, "oc": oc, "kc": "kl_policy_ref"}
    assert notes.kl_column_note(META, chosen, direction) is not None
    table = audit.load_table(ROOT / "data" / "example_audit.csv", sc, oc, mask_col="mask",
                             position_col="position", sequence_col="sequence_id", kl_col="kl_policy_ref")
    rep = audit.audit(**table.as_kwargs(), direction=direction)
    exact = notes.exact_for(META, chosen, direction)
    assert len(notes.verdict(rep, exact)) == 3  # the old behaviour: a token ratio for rb
    lines = notes.verdict(rep, exact, True, same_kl=False)
    assert len(lines) == 2 and not any("rb needs" in line for line in lines)
    caption = notes.rb_caption(rep, same_kl=False)
    assert "given that prefix" not in caption and "In expectation" not in caption
    assert "compare estimators of different quantities" in caption
    assert notes.ratio_text(rep.variance_ratio["k1"]) in caption


def _ess_rows(n_ones):
    """``n_ones`` tokens of weight 1 and one of weight 0.9 (through the rollout column)."""
    return [(-1.0, -1.2, -1.0)] * n_ones + [(-1.0, -1.2, -1.0 - math.log(0.9))]


@pytest.mark.parametrize(("n_ones", "text", "pct"), [(29, "29.99", "99.97%"), (99, "99.99", "99.99%")])
def test_an_ess_just_below_a_threshold_is_not_rounded_across_it(n_ones, text, pct):
    rep = audit.audit(**_audit_csv(_ess_rows(n_ones), "lp,lq,lr", rollout_col="lr"))
    assert rep.ess < n_ones + 1 and f"{rep.ess:,.0f}" == f"{n_ones + 1}"  # the old metric's text
    assert audit.count_text(rep.ess) == text
    assert notes.ess_share(rep.ess_fraction) == pct and f"{rep.ess_fraction:.1%}" == "100.0%"
    note = str(rep.sample_size().note)
    assert note.startswith(f"Only {text} effective tokens") and f"{n_ones + 1}.0" not in note
    assert notes.ess_share(1.0) == "100.0%" and notes.ess_share(0.5) == "50.0%"


def test_k1_and_k3_are_unbiased_only_if_the_sampler_drew_the_tokens_and_covered_the_other_policy():
    """40 rows lp = 0, lq = −800: k1 = 800, k3 = 799; k3 is biased since E_q[r] ≠ 1."""
    rep = audit.audit(**_audit_csv([(0, -800)] * 40, "lp,lq"))
    line = notes.verdict(rep, None)[1]
    assert "**disagree**" in line and "both unbiased for" not in line
    assert ("which would both be unbiased for KL[sampler‖other] if the tokens came from the sampler and the "
            "sampler covered the other policy") in line
    assert "the other policy may put probability where the sampler never draws" in line
    agree = notes.verdict(example(), None)[1]
    assert "both unbiased for" not in agree and "would both be unbiased" in agree


def test_position_buckets_under_30_tokens_get_no_se():
    """30 tokens at positions 0–29: buckets of 1, 1, 2, 4, 8 and 14 tokens had ±2 SE from 2 tokens."""
    rep = audit.audit(**_audit_csv([(-1.0, -1.0 - 0.1 * (i % 3), i) for i in range(30)], "lp,lq,pos",
                                   position_col="pos"))
    small = rep.sample_size()
    assert small.se and [b.count for b in rep.positions] == [1, 1, 2, 4, 8, 14]
    assert math.isfinite(rep.positions[2].se["k1"])  # the core's SE from 2 tokens
    assert all(math.isnan(se) for b in notes.position_buckets(rep, small.se) for se in b.se.values())
    assert notes.thin_buckets(rep, small.se) == 6
    assert not any(c.endswith("SE") for c in notes.position_rows(rep, small.se).columns)
    caption = notes.position_caption(small.se, False, 6, 6)
    assert "±2 SE" not in caption and "every bucket has fewer than 30 tokens" in caption
    # the example: thick buckets keep their SE, thin ones lose it, and the caption counts them
    full = example()
    thin = notes.thin_buckets(full)
    counts = [b.count for b in full.positions]
    assert thin == sum(c < audit.MIN_FOR_SE for c in counts)
    shown = notes.position_buckets(full)
    assert all(math.isfinite(b.se["k1"]) == (b.count >= audit.MIN_FOR_SE) for b in shown)
    if thin:
        assert f"{thin} bucket" in notes.position_caption(True, False, thin, len(counts))
    assert "1 bucket has fewer than 30 tokens, so it gets no bar" in notes.position_caption(True, False, 1, 5)


def test_the_example_box_says_when_its_exact_kls_are_shown():
    text = notes.example_info(META, "example_audit.csv")
    assert "shown beside the estimates." not in text
    assert "shown beside the estimates while the columns keep its own roles" in text
    assert notes.exact_for(META, {**ROLES, "mc": None}, "sampler-other") is None


def test_one_token_and_one_sequence_are_singular():
    one = audit.audit(**_audit_csv([(-1.0, -1.5, 0)], "lp,lq,seq", sequence_col="seq"))
    assert notes.counted_line(one, "x.csv") == "**x.csv:** its one token, estimating **KL[sampler‖other]**."
    assert str(one.sample_size().note).startswith("Only 1 token: too few")
    assert str(one.sequences.sample_size().note).startswith("Only 1 sequence: too few")
    assert "1 sequences" not in notes.sequences_caption(1) and "200 sequences" in notes.sequences_caption(200)
    two = audit.audit(**_audit_csv([(-1.0, -1.5), (-1.0, -1.2)], "lp,lq"))
    assert notes.counted_line(two, "x.csv").startswith("**x.csv:** all 2 tokens")
    assert str(two.sample_size().note).startswith("Only 2 tokens: too few")


@pytest.mark.parametrize("direction", ["sampler-other", "other-sampler"])
def test_the_exact_kl_columns_default_follows_the_direction(direction):
    """?dir=KL[other‖sampler]: kc stayed kl_policy_ref, KL[policy‖ref], so the page opened with a
    warning that rb estimates another KL than k1 and k3 ("choose `kl_ref_policy`")."""
    kc = notes.example_role("kc", direction)
    assert kc == META["kl_cols"][direction]
    assert notes.example_role("sc", direction) == "logp_policy"  # the other roles keep theirs
    chosen = {**ROLES, "kc": kc}
    assert notes.kl_column_note(META, chosen, direction) is None  # rb estimates k1's and k3's KL
    assert notes.exact_for(META, chosen, direction)["rb"] == notes.exact_for(META, chosen, direction)["k1"]
    other = next(d for d in META["kl_cols"] if d != direction)
    assert notes.kl_column_after_switch(notes.example_role("kc", other), direction) == kc
    for kept in (kc, None, notes.NONE, "my_kl"):  # a choice of the reader's stays
        assert notes.kl_column_after_switch(kept, direction) == kept


def _audit_page(**query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/audit.py")
    at.query_params.update(query)
    return at.run()


def test_the_audit_page_opens_each_direction_with_its_own_exact_kl_column():
    at = _audit_page(dir="KL[other‖sampler]")
    assert not at.exception and not at.error
    assert at.selectbox(key="kc").value == "kl_ref_policy" and not at.warning
    assert "kc" not in at.query_params  # the default: left out of the link
    at.segmented_control(key="dir").set_value("sampler-other").run()  # the default column follows
    assert at.selectbox(key="kc").value == "kl_policy_ref" and not at.warning
    at.selectbox(key="kc").set_value("(none)").run()  # a reader's choice stays through a switch
    at.segmented_control(key="dir").set_value("other-sampler").run()
    assert at.selectbox(key="kc").value == "(none)"
    at = _audit_page(dir="KL[other‖sampler]", kc="kl_policy_ref")  # a link's mismatch: kept, warned
    assert at.selectbox(key="kc").value == "kl_policy_ref"
    assert any("choose `kl_ref_policy`" in w.value for w in at.warning)


def test_the_kl_column_pickers_are_the_examples_and_each_uploads():
    assert notes.holds_kl_column("kc")
    assert notes.holds_kl_column(notes.upload_key("kc", "f1a2"))
    assert not notes.holds_kl_column(notes.upload_key("sc", "f1a2"))
    assert not notes.holds_kl_column("kcx") and not notes.holds_kl_column("dir")


def test_metric_figures_have_no_trailing_point_and_are_written_past_a_double():
    s = audit.EstimatorSummary(mean=63.46601, std=1.0, se=63.4, neg_fraction=0.0, p95=1.0, p99=1.0, max=1.0)
    assert notes.se_text(s) == "63" and notes.summary_mean_text(s) == "63.46601"  # not "63."
    s = audit.EstimatorSummary(mean=0.5, std=1.0, se=0.1, neg_fraction=0.0, p95=1.0, p99=1.0, max=1.0)
    assert notes.se_text(s) == "0.10"
    rep = audit.audit(**_audit_csv([(-1, -1)] * 40 + [(-800, 0)], "lp,lq"))
    assert notes.summary_mean_text(rep.k3) == "6.65e+345"
    assert notes.se_text(rep.k3) == from_log(rep.k3.log_se, 2, trim=True) and "e+345" in notes.se_text(rep.k3)


def test_a_variance_ratio_past_a_double_is_written_from_its_log_not_as_infinite():
    """The example with one counted token at log r = 800: Var(k3)/Var(rb) is past a double, and the metric,
    the caption and the verdict called it ∞ ("rb does not vary in this file", which is false)."""
    import pandas as pd

    df = pd.read_csv(ROOT / "data" / "example_audit.csv")
    i = int(np.flatnonzero(df["mask"].to_numpy() == 1)[0])
    df.loc[i, ["logp_policy", "logp_ref"]] = [-800.0, 0.0]
    rep = audit.audit(df["logp_policy"], df["logp_ref"], mask=df["mask"], exact_kl=df["kl_policy_ref"],
                      sequence_ids=df["sequence_id"], positions=df["position"])
    assert math.isinf(rep.variance_ratio["k3"]) and math.isfinite(rep.log_variance_ratio["k3"])
    shown = notes.variance_ratio_text(rep.variance_ratio, rep.log_variance_ratio, "k3")
    assert shown == "×" + from_log(rep.log_variance_ratio["k3"], 4, trim=True) and "e+69" in shown
    assert f"Var(k3)/Var(rb) = {shown}" in notes.rb_caption(rep)
    assert "does not vary" not in " ".join(notes.verdict(rep, None, True))
    assert notes.times_text(4.15e9) == "4.15e+09" and notes.times_text(1234.0) == "1,234"
    assert notes.unseen_position_means(rep) == (
        " k3 has no dot where its mean is past the largest double (see the table).")
    assert notes.unseen_position_means(example()) == ""


def test_a_mean_past_a_double_in_the_other_direction_blames_no_ratio():
    """other-sampler, log r = 705 on every token: k3 ≈ (t − 1)e^t passes a double at t ≈ 704, while
    r = e^705 = 1.5e306 fits; the verdict said "some token's probability ratio r is too"."""
    rep = audit.audit(np.full(40, -706.0), np.full(40, -1.0), direction="other-sampler")
    assert math.isinf(rep.k3.mean) and math.isfinite(math.exp(705.0))
    line = notes.verdict(rep, None, True)[1]
    assert "so is some token's k3" in line and "ratio r" not in line


def test_nearly_every_negative_token_is_not_written_as_all_of_them():
    """An audit: 9,996 of 10,000 tokens with logp_ref > logp_policy read "100.0%" in the verdict and the caption."""
    n, pos = 10_000, 4
    logp = np.full(n, -2.0)
    other = np.full(n, -1.5)
    other[:pos] = -2.5
    rep = audit.audit(logp, other)
    assert rep.k1.neg_fraction == 0.9996
    small = rep.sample_size()
    assert "**99.96%** of k1's per-token values are negative" in notes.verdict(rep, None, small.se, True)[0]
    assert notes.histogram_caption(rep, "k1", small).startswith("99.96% of tokens below 0")


def test_too_few_tokens_for_an_sd_give_no_ratio_of_variances():
    """An audit: with 2 tokens the page withheld the SDs but still printed Var(k1)/Var(rb) = ×196 from them."""
    rep = audit.audit([-1.0, -2.0], [-1.5, -1.0], exact_kl=[0.1, 0.3])
    assert not rep.sample_size().se
    caption = notes.rb_caption(rep, True, se_shown=False)
    assert "Var(" not in caption and "×" not in caption and "**more**" not in caption
    assert "Var(k1)/Var(rb)" in notes.rb_caption(rep, True, se_shown=True)


def test_an_empty_verdict_chart_is_not_described_by_its_dots():
    """An audit: with every mean past the largest double the chart has no dot, and its caption began "Each dot is an
    estimator's mean"."""
    import math

    text = notes.verdict_chart_caption(False, [("k1", math.inf, math.nan), ("k3", math.inf, math.nan)])
    assert text.startswith("No estimator's mean fits in a double here, so the chart has no dot")
    assert "Each dot" not in text and "have means past the largest double" not in text


def test_too_few_sequences_show_no_ratio_of_their_variances():
    """An audit: 4 sequences gave "Var(Σk1)/Var(Σrb) = ×1846" beside "too few sequences for a standard error"."""
    import numpy as np

    from kl_core.audit.statistics import audit

    rng = np.random.default_rng(0)
    lp, lr = -rng.exponential(1.0, 200), -rng.exponential(1.0, 200)
    few = audit(lp, lr, positions=np.tile(np.arange(50), 4), sequence_ids=np.repeat(np.arange(4), 50),
                exact_kl=np.full(200, 0.05))
    assert few.sequences is not None and few.sequences.variance_ratio is not None
    assert notes.sequence_ratio_shown(few) is None and "Var(Σk1)/Var(Σrb)" not in notes.rb_caption(few, True, True)
    many = audit(np.tile(lp, 10), np.tile(lr, 10), positions=np.tile(np.arange(50), 40),
                 sequence_ids=np.repeat(np.arange(40), 50), exact_kl=np.full(2000, 0.05))
    assert notes.sequence_ratio_shown(many) is not None and "Var(Σk1)/Var(Σrb)" in notes.rb_caption(many, True, True)
