"""AppTest checks of the "Audit your log-probs" page.

It runs and reruns cleanly; its numbers are :func:`kl_core.audit.statistics.audit`'s; a
link reproduces the column choices (the keys the audit had on the approx_kl
page); uploads go through AppTest's own file-uploader support
(``at.file_uploader[0].set_value((name, bytes, mime))``), and every bad file
gets one ``st.error`` while the page keeps working.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kl_core.audit import statistics as audit
from lab.format import share

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/audit.py"
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
EXAMPLE_META = json.loads((ROOT / "data" / "example_audit.json").read_text())
EXAMPLE_COLS = {
    "sampler_col": "logp_policy",
    "other_col": "logp_ref",
    "mask_col": "mask",
    "position_col": "position",
    "sequence_col": "sequence_id",
}
KEYS = ("k1", "k2", "k3")


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def open_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


def metrics(at: AppTest) -> dict[str, object]:
    return {m.label: m for m in at.metric}


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def example_report(direction: str = "sampler-other", **cols) -> audit.AuditReport:
    kw = {**EXAMPLE_COLS, **cols}
    table = audit.load_table(EXAMPLE_CSV, kw.pop("sampler_col"), kw.pop("other_col"), **kw)
    return audit.audit(**table.as_kwargs(), direction=direction)


def frame(at: AppTest, first_column: str, first_value: str) -> pd.DataFrame:
    """The data frame whose first column is ``first_column`` and starts with ``first_value``."""
    for df in at.dataframe:
        v = df.value
        if v.columns[0] == first_column and str(v.iloc[0, 0]) == first_value:
            return v
    raise AssertionError(f"no table starting {first_column}={first_value}")


def uploader(at: AppTest):
    (up,) = at.file_uploader
    return up


def selectbox_labelled(at: AppTest, label: str):
    (box,) = [s for s in at.selectbox if s.label == label]
    return box


# ------------------------------------------------------------------ defaults


def test_default_run_audits_the_bundled_example():
    at = open_page()
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "Audit your log-probs"
    m = metrics(at)
    # the bundled example, with its exact KLs beside the estimates
    assert any("bundled example" in i.value for i in at.info)
    rep = example_report()
    summary = frame(at, "estimator", "k1").set_index("estimator")
    ex = EXAMPLE_META["exact"]
    for k in KEYS:
        s_k = rep.summaries[k]
        assert summary.loc[k, "mean"] == s_k.mean
        assert summary.loc[k, "SE"] == s_k.se
        assert summary.loc[k, "share < 0"] == share(s_k.neg_fraction)  # text: lab.format.printf_text_column
        assert summary.loc[k, "p99"] == s_k.p99
        assert m[f"{k} mean"].value == f"{s_k.mean:.5f}"
    assert summary.loc["k1", "exact mean"] == ex["kl_sampler_other_per_token"]
    assert summary.loc["k2", "exact mean"] == ex["k2_sampler_other_per_token"]
    assert summary.loc["k3", "exact mean"] == ex["kl_sampler_other_per_token"]
    assert m["Tokens counted"].value == f"{EXAMPLE_META['n_counted']:,}"
    # k3 lands within 2 SE of the exact KL on the example
    assert abs(rep.k3.mean - ex["kl_sampler_other_per_token"]) < 2 * rep.k3.se
    positions = frame(at, "positions", "4–7")
    assert list(positions["tokens"]) == [b.count for b in rep.positions]
    seqs = [df.value for df in at.dataframe if "exact mean" in df.value.columns][-1]
    assert seqs.set_index("estimator").loc["k3", "mean"] == rep.sequences.stats["k3"].mean
    assert (
        seqs.set_index("estimator").loc["k3", "exact mean"] == ex["kl_sampler_other_per_sequence"]
    )
    # the verdict's chart, three histograms, one per-position chart
    assert len(at.get("vega_lite_chart")) == 5


# ------------------------------------------------------------------ widgets


def test_a_link_reproduces_the_columns_and_a_bad_value_is_named():
    at = open_page(dir="KL[other‖sampler]", qc="(none)")
    assert not at.exception
    rep = example_report("other-sampler", sequence_col=None)
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert summary.loc["k3", "mean"] == rep.k3.mean
    assert summary.loc["k3", "exact mean"] == EXAMPLE_META["exact"]["kl_other_sampler_per_token"]
    assert not [t for t in at.subheader if t.value == "Sequence sums"]

    bad = open_page(sc="nope")
    assert not bad.exception
    notes = [w.value for w in bad.warning]
    assert any("`sc=nope`" in n for n in notes)


def test_changing_the_example_columns_drops_the_exact_values():
    at = open_page()
    at.selectbox(key="mc").set_value("(none)").run()
    assert not at.exception
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert "exact mean" not in summary.columns
    rep = example_report(mask_col=None)
    assert summary.loc["k1", "mean"] == rep.k1.mean
    assert any("exact KLs apply to its own roles" in c.value for c in at.caption)


# ------------------------------------------------------------------ the verdict (issue 20 §3)


def test_the_verdict_on_the_example_names_the_negative_share_and_k3_against_the_exact_kl():
    at = open_page()
    assert not at.exception and not at.error
    rep = example_report(kl_col="kl_policy_ref")
    exact = EXAMPLE_META["exact"]["kl_sampler_other_per_token"]
    (verdict,) = [m.value for m in at.markdown if m.value.startswith("- **")]
    lines = verdict.split("\n")
    assert len(lines) == 3
    assert f"**{rep.k1.neg_fraction:.1%}** of k1's per-token values are negative" in lines[0]
    assert abs(rep.k3.mean - exact) <= 2 * rep.k3.se
    assert "k3's mean" in lines[1] and "**matches** the exact KL[sampler‖other]" in lines[1]
    assert f"{exact:.5f}" in lines[1]
    assert f"rb needs {rep.variance_ratio['k1']:,.0f}× fewer tokens than k1" in lines[2]
    # the question comes first, then the verdict, then its chart (the first chart on the page)
    texts = [m.value for m in at.markdown]
    assert texts[0].startswith("**The question:**")
    assert texts.index(verdict) < texts.index(next(t for t in texts if "its bar spans ±2 SE" in t))
    # the pickers sit in "More settings", still bound to the URL
    assert "More settings: columns and direction" in [e.label for e in at.expander]
    assert at.selectbox(key="sc").value == "logp_policy"
    # the table of columns and the example to download
    cols = frame(at, "column", notes_first_column())
    assert list(cols["required"]).count("required") == 2
    assert any(b.label.startswith("Download the example file") for b in at.download_button)


def notes_first_column() -> str:
    from lab.notes.audit import COLUMN_ROWS

    return COLUMN_ROWS[0][0]


def test_the_verdict_follows_the_direction():
    at = open_page(dir="KL[other‖sampler]", kc="kl_ref_policy")
    assert not at.exception and not at.error
    rep = example_report("other-sampler", kl_col="kl_ref_policy")
    exact = EXAMPLE_META["exact"]["kl_other_sampler_per_token"]
    (verdict,) = [m.value for m in at.markdown if m.value.startswith("- **")]
    word = "**matches**" if abs(rep.k3.mean - exact) <= 2 * rep.k3.se else "**misses**"
    assert f"{word} the exact KL[other‖sampler]" in verdict
    assert f"**{rep.k1.neg_fraction:.1%}**" in verdict


# ------------------------------------------------------------------ rb


def test_the_example_reports_rb_beside_k1_and_k3():
    at = open_page()
    assert not at.exception and not at.error
    assert selectbox_labelled(at, "Exact next-token KL column (gives rb)").value == "kl_policy_ref"
    rep = example_report(kl_col="kl_policy_ref")
    m = metrics(at)
    assert m["rb mean"].value == f"{rep.rb.mean:.5f}"
    assert m["Var(k1)/Var(rb)"].value == f"×{rep.variance_ratio['k1']:.4g}"
    assert m["Var(k3)/Var(rb)"].value == f"×{rep.variance_ratio['k3']:.4g}"
    assert m["Var(Σk1)/Var(Σrb)"].value == f"×{rep.sequences.variance_ratio['k1']:.4g}"
    assert rep.variance_ratio["k1"] > 100  # the example's rb is far less noisy than k1
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert summary.loc["rb", "mean"] == rep.rb.mean and summary.loc["rb", "SE"] == rep.rb.se
    assert summary.loc["rb", "exact mean"] == EXAMPLE_META["exact"]["kl_sampler_other_per_token"]
    assert "not always" in text_of(at)
    seqs = [df.value for df in at.dataframe if "exact mean" in df.value.columns][-1].set_index("estimator")
    assert seqs.loc["rb", "mean"] == rep.sequences.stats["rb"].mean


def test_rb_follows_the_direction_and_can_be_switched_off():
    at = open_page(dir="KL[other‖sampler]", kc="kl_policy_ref")  # a link that kept the other direction's column
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    assert "choose `kl_ref_policy`" in warning
    at.selectbox(key="kc").set_value("kl_ref_policy").run()
    assert not at.warning
    rep = example_report("other-sampler", kl_col="kl_ref_policy")
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert summary.loc["rb", "mean"] == rep.rb.mean
    assert summary.loc["rb", "exact mean"] == EXAMPLE_META["exact"]["kl_other_sampler_per_token"]
    at.selectbox(key="kc").set_value("(none)").run()
    assert "rb mean" not in metrics(at)
    assert "rb" not in list(frame(at, "estimator", "k1")["estimator"])


def test_an_uploaded_file_gets_rb_from_a_chosen_column():
    at = open_page()
    data = EXAMPLE_CSV.read_text().replace("kl_policy_ref", "my_kl", 1).encode()
    at = upload(at, "run.csv", data)
    assert "rb mean" not in metrics(at)  # no column of the example's name: no rb yet
    selectbox_labelled(at, "Exact next-token KL column (gives rb)").set_value("my_kl").run()
    assert not at.exception
    rep = example_report(kl_col="kl_policy_ref")
    assert metrics(at)["rb mean"].value == f"{rep.rb.mean:.5f}"
    selectbox_labelled(at, "Exact next-token KL column (gives rb)").set_value("logp_ref").run()
    (err,) = [e.value for e in at.error]
    assert "can't be audited with these columns" in err and "the exact next-token KL" in err


# ------------------------------------------------------------------ uploads


def upload(at: AppTest, name: str, data: bytes, mime: str = "text/csv") -> AppTest:
    uploader(at).set_value((name, data, mime))
    return at.run()


def test_uploading_the_example_csv_reproduces_the_core_audit():
    at = open_page()
    at = upload(at, "my_run.csv", EXAMPLE_CSV.read_bytes())
    assert not at.exception and not at.error
    assert not any("bundled example" in i.value for i in at.info)
    assert any("a link can't carry it" in c.value for c in at.caption)
    # same column names as the example: the pickers start there (unbound, not in the URL)
    assert selectbox_labelled(at, "Sampler log-prob column").value == "logp_policy"
    rep = example_report()
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert "exact mean" not in summary.columns  # an upload has no known exact KL
    for k in KEYS:
        assert summary.loc[k, "mean"] == rep.summaries[k].mean
        assert summary.loc[k, "std"] == rep.summaries[k].std
    assert any("my_run.csv" in m.value for m in at.markdown)


def test_uploading_parquet_with_a_rollout_column_reports_the_ess():
    df = pd.read_csv(EXAMPLE_CSV)
    rng = np.random.default_rng(0)
    df["logp_rollout"] = np.minimum(df["logp_policy"] + rng.normal(0, 0.2, len(df)), 0.0)
    buf = io.BytesIO()
    df.to_parquet(buf)
    at = open_page()
    at = upload(at, "rollout.parquet", buf.getvalue(), "application/octet-stream")
    assert not at.exception and not at.error
    selectbox_labelled(at, "Rollout log-prob column").set_value("logp_rollout").run()
    assert not at.exception and not at.error
    rep = audit.audit(
        df["logp_policy"].to_numpy(),
        df["logp_ref"].to_numpy(),
        mask=df["mask"].to_numpy(),
        positions=df["position"].to_numpy(),
        sequence_ids=df["sequence_id"].to_numpy(),
        logp_rollout=df["logp_rollout"].to_numpy(),
    )
    m = metrics(at)
    assert m["ESS, tokens"].value == audit.count_text(rep.ess) == f"{rep.ess:,.1f}"
    assert m["ESS / tokens"].value == f"{rep.ess_fraction:.1%}"
    assert m["ESS, sequences"].value == audit.count_text(rep.sequences.ess)
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert summary.loc["k3", "mean"] == rep.k3.mean


def _csv(text: str) -> bytes:
    return text.encode()


GOOD = "logp_policy,logp_ref\n-1.0,-1.5\n-2.0,-1.0\n-0.5,-0.7\n"


@pytest.mark.parametrize(
    ("name", "data", "pick", "message"),
    [
        ("notes.txt", b"hello", None, "“notes.txt” is not a CSV or Parquet file"),
        ("broken.parquet", b"not parquet at all", None, "“broken.parquet” could not be read as a Parquet file"),
        ("nan.csv", _csv("logp_policy,logp_ref\n-1.0,-1.5\n,-1.0\n"), None, "empty or non-numeric cells at data row 2"),
        ("positive.csv", _csv("logp_policy,logp_ref\n0.5,-1.5\n-2.0,-1.0\n"), None, "values above 0 at data row 1"),
        ("empty.csv", b"", None, "“empty.csv” is empty. Upload a CSV file"),
        ("image.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None, "it looks like a PNG image"),
        (
            "text.csv",
            _csv("logp_policy,logp_ref,name\n-1,-2,a\n-1,-2,b\n"),
            ("Other log-prob column", "name"),
            "column “name” (the other policy's log-probs): it holds text, not numbers",
        ),
        (
            "one_column.csv",
            _csv("logp\n-1.0\n-2.0\n"),
            ("Other log-prob column", "logp"),
            "Column “logp” is chosen for both",
        ),
    ],
)
def test_a_bad_file_gets_an_error_and_the_page_keeps_running(name, data, pick, message):
    at = open_page()
    at = upload(at, name, data)
    if pick is not None:
        if name == "one_column.csv":
            selectbox_labelled(at, "Sampler log-prob column").set_value("logp").run()
        selectbox_labelled(at, pick[0]).set_value(pick[1]).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors
    assert "can't be audited" in errors[0]
    assert not any(w in errors[0] for w in ("path_or_buffer", "_col=", "codec", "MAX_FILE_BYTES", "dtype"))
    # the page keeps working: a good file replaces the bad one
    at = upload(at, "good.csv", _csv(GOOD))
    assert not at.exception and not at.error
    assert frame(at, "estimator", "k1").set_index("estimator").loc["k1", "mean"] == audit.audit(
        [-1.0, -2.0, -0.5], [-1.5, -1.0, -0.7]
    ).k1.mean


def test_a_file_missing_the_log_prob_columns_says_what_is_missing():
    at = open_page()
    at = upload(at, "other.csv", _csv("a,b\n-1.0,-1.5\n"))
    assert not at.exception and not at.error
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("**other.csv has no column chosen for: Sampler log-prob column; "
                              "Other log-prob column.**")
    assert "Its columns: `a`, `b`." in warning
    assert selectbox_labelled(at, "Sampler log-prob column").value is None
    assert not at.get("vega_lite_chart")  # no report, no verdict chart
    # choosing the two columns brings the verdict
    selectbox_labelled(at, "Sampler log-prob column").set_value("a").run()
    selectbox_labelled(at, "Other log-prob column").set_value("b").run()
    assert not at.warning or not any("has no column chosen" in w.value for w in at.warning)


def test_a_file_over_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(audit, "MAX_FILE_BYTES", 64)
    at = open_page()
    at = upload(at, "big.csv", _csv(GOOD * 3))
    assert not at.exception
    (err,) = at.error
    assert "“big.csv” is 153 bytes, over the limit of 64 bytes. Upload fewer rows" in err.value


def test_a_four_token_upload_warns_and_withholds_se_and_percentiles():
    at = open_page()
    at = upload(at, "four.csv", _csv("logp_policy;logp_ref\n-1,0;-1,5\n-2,0;-1,0\n-0,5;-0,7\n-3,0;-2,0\n"))
    assert not at.exception and not at.error  # a semicolon file with decimal commas is read
    (warning,) = [w.value for w in at.warning if "Only 4 tokens" in w.value]
    assert "SE, std, p95 and p99 are not shown" in warning
    m = metrics(at)
    assert m["k1 mean"].value == f"{audit.audit([-1.0, -2.0, -0.5, -3.0], [-1.5, -1.0, -0.7, -2.0]).k1.mean:.5f}"
    assert not m["k1 mean"].proto.delta  # no ± SE
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert not {"SE", "std", "p95", "p99"} & set(summary.columns)  # withheld, not shown empty
    assert summary["mean"].notna().all() and summary["max"].notna().all()
    assert not any("p99" in c.value for c in at.caption)  # nor under the histograms
    # the bundled example (hundreds of tokens) gets no such warning
    uploader(at).clear()
    at.run()
    assert not any("Only" in w.value for w in at.warning)


def test_clearing_the_upload_returns_to_the_example():
    at = open_page()
    at = upload(at, "small.csv", _csv(GOOD))
    assert not at.error
    summary = frame(at, "estimator", "k1").set_index("estimator")
    assert summary.loc["k1", "mean"] == audit.audit([-1.0, -2.0, -0.5], [-1.5, -1.0, -0.7]).k1.mean
    uploader(at).clear()
    at.run()
    assert not at.exception
    assert any("bundled example" in i.value for i in at.info)


# ------------------------------------------------------------------ chart builders


def test_position_chart_is_a_valid_spec_with_error_bars():
    from charts.audit import bucket_label, position_chart

    rep = example_report()
    spec = position_chart(rep.positions).to_dict()
    json.dumps(spec, allow_nan=False)
    rows = next(iter(v for k, v in spec["datasets"].items() if len(v) > 1))
    assert len(rows) == 3 * len(rep.positions)
    first = rows[0]
    b = rep.positions[0]
    assert first["bucket"] == bucket_label(b) == "4–7"
    assert first["low"] == pytest.approx(b.mean["k1"] - 2 * b.se["k1"])
    assert "token position (log2 buckets)" in json.dumps(spec, ensure_ascii=False)
    assert bucket_label(audit.PositionBucket(0, 1, 1, {}, {})) == "0"
    assert bucket_label(audit.PositionBucket(262144, None, 1, {}, {})) == "262144+"


def test_estimates_chart_is_a_valid_spec_with_the_exact_rule():
    from charts.audit import estimates_chart

    rep = example_report(kl_col="kl_policy_ref")
    rows = [(k, rep.all_summaries[k].mean, rep.all_summaries[k].se) for k in ("k1", "k3", "rb")]
    chart = estimates_chart(rows, exact=EXAMPLE_META["exact"]["kl_sampler_other_per_token"])
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(spec, allow_nan=False)
    est = spec["datasets"]["estimates"]
    assert [r["estimator"] for r in est] == ["k1", "k3", "rb"]
    assert est[1]["low"] == pytest.approx(rep.k3.mean - 2 * rep.k3.se)
    assert spec["datasets"]["exact"][0]["value"] == EXAMPLE_META["exact"]["kl_sampler_other_per_token"]
    # no exact value: no rule; a withheld SE: a dot without a bar
    bare = estimates_chart([("k1", 0.1, float("nan"))]).to_dict()
    assert "exact" not in bare["datasets"] and bare["datasets"]["estimates"][0]["low"] is None


def test_charts_without_any_bar_do_not_promise_two_se():
    from charts.audit import estimates_chart, position_chart

    nan = float("nan")
    bare = json.dumps(estimates_chart([("k1", 0.1, nan), ("k3", 0.2, nan)]).to_dict(), ensure_ascii=False)
    assert "±2 SE" not in bare and "Mean per token" in bare
    barred = json.dumps(estimates_chart([("k1", 0.1, 0.01), ("k3", 0.2, nan)]).to_dict(), ensure_ascii=False)
    assert "Mean per token, ±2 SE" in barred
    b = audit.PositionBucket(0, 1, 3, {k: 0.1 for k in KEYS}, {k: nan for k in KEYS})
    spec = json.dumps(position_chart([b]).to_dict(), ensure_ascii=False)
    assert "±2 SE" not in spec and "mean per token" in spec
    rep = example_report()
    assert "mean per token, ±2 SE" in json.dumps(position_chart(rep.positions).to_dict(), ensure_ascii=False)


def test_an_upload_whose_k1_does_not_vary_is_audited_not_an_error():
    """40 rows logp_policy = logp_ref, kl_policy_ref 0 … 0.39: Var(k1)/Var(rb) = 0 raised ZeroDivisionError."""
    rows = "".join(f"-1.0,-1.0,{i / 100}\n" for i in range(40))
    at = upload(open_page(), "flat.csv", _csv("logp_policy,logp_ref,kl_policy_ref\n" + rows))
    assert not at.exception and not at.error
    assert "rb needs more tokens than k1, which does not vary in this file" in text_of(at)


def test_rb_of_another_kl_is_not_compared_with_k1_on_the_page():
    at = open_page(dir="KL[other‖sampler]", kc="kl_policy_ref")  # the warning says kc holds the other KL
    assert not at.exception and any("choose `kl_ref_policy`" in w.value for w in at.warning)
    text = text_of(at)
    assert "For the same error bar, rb needs" not in text and "different quantities" in text
    at.selectbox(key="kc").set_value("kl_ref_policy").run()
    assert "For the same error bar, rb needs" in text_of(at)


def test_an_ess_just_below_30_is_not_shown_as_30():
    rows = "".join("-1.0,-1.2,-1.0\n" for _ in range(29)) + f"-1.0,-1.2,{float(-1.0 - np.log(0.9))!r}\n"
    at = upload(open_page(), "ess.csv", _csv("logp_policy,logp_ref,logp_rollout\n" + rows))
    selectbox_labelled(at, "Rollout log-prob column").set_value("logp_rollout").run()
    assert not at.exception and not at.error
    m = metrics(at)
    assert m["ESS, tokens"].value == "29.99" and m["ESS / tokens"].value == "99.97%"
    (warning,) = [w.value for w in at.warning if "effective tokens" in w.value]
    assert "Only 29.99 effective tokens" in warning


def test_the_exact_kl_column_follows_a_switch_of_direction():
    at = open_page()
    label = "Exact next-token KL column (gives rb)"
    assert selectbox_labelled(at, label).value == "kl_policy_ref"
    (direction,) = [b for b in at.button_group if b.label == "Direction"]
    direction.set_value("other-sampler").run()
    assert not at.exception
    assert selectbox_labelled(at, label).value == "kl_ref_policy"
    selectbox_labelled(at, label).set_value("(none)").run()  # the reader's own choice is kept
    (direction,) = [b for b in at.button_group if b.label == "Direction"]
    direction.set_value("sampler-other").run()
    assert selectbox_labelled(at, label).value == "(none)"
