"""lab.notes.audit: the example's exact values for its own roles, tables and captions."""

from __future__ import annotations

import json
from pathlib import Path

from kl_core import audit
from lab.notes import audit as notes

ROOT = Path(__file__).resolve().parents[2]
META = json.loads((ROOT / "data" / "example_audit.json").read_text())
ROLES = {"sc": "logp_policy", "oc": "logp_ref", "mc": "mask", "pc": "position",
         "qc": "sequence_id", "rc": None}


def example(direction="sampler-other"):
    table = audit.load_table(ROOT / "data" / "example_audit.csv", "logp_policy", "logp_ref",
                             mask_col="mask", position_col="position", sequence_col="sequence_id")
    return audit.audit(**table.as_kwargs(), direction=direction)


def test_the_audit_keys_are_the_old_pages():
    assert notes.AUDIT_KEYS == ("sc", "oc", "mc", "pc", "qc", "rc", "dir")
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
    assert notes.summary_caption(True, True).endswith("self-normalised importance sampling.")
    assert notes.histogram_caption(rep.k1, False).startswith(f"{rep.k1.neg_fraction:.1%} of tokens below 0")
    assert "200 sequences" in notes.sequences_caption(200)
    assert "bundled example" in notes.example_info(META, "example_audit.csv")
