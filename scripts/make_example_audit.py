r"""Write the bundled example for the log-prob audit: ``data/example_audit.csv`` and ``.json``.

The generating process is a toy language model whose exact KL is known:

* a vocabulary of :data:`VOCAB` tokens;
* at position ``t`` the **policy** (the sampler) has logits
  :math:`\ell_t = b + 0.8\,\tfrac{t}{T-1}\,d` (a Zipf-like base ``b`` drifting
  along ``d``), and the **reference** (the other policy) has
  :math:`\ell_t - (0.15 + 0.35\,\tfrac{t}{T-1})\,g`, so the two drift apart
  along the sequence and the per-position table has something to show;
* the distributions depend on the position only, not on earlier tokens, so
  the exact KL of every token is a categorical KL;
* :data:`N_SEQUENCES` sequences of 48 … :data:`MAX_LEN` tokens, every token
  drawn from the policy; the first 4 … 16 tokens play the prompt
  (``mask = 0``), the rest the response (``mask = 1``).

CSV columns
-----------
``sequence_id``, ``position`` (0-based index within the sequence), ``token``,
``logp_policy`` (log-prob of the token under the policy that sampled it: the
*sampler* column), ``logp_ref`` (under the reference model: the *other*
column) and ``mask``.  So ``direction="sampler-other"`` audits
KL[policy‖ref], the RLHF penalty on the policy's own samples.

Two more columns hold what a trainer can compute from full logits: the exact
KL of the two next-token distributions at each token's prefix,
``kl_policy_ref`` (KL[policy‖ref], for ``direction="sampler-other"``) and
``kl_ref_policy`` (KL[ref‖policy], for ``"other-sampler"``).  Given as
``kl_col`` they add the Rao–Blackwellized ``rb`` to the audit.  Here the
distributions depend on the position only, so each is the per-position KL.

JSON metadata
-------------
``exact`` holds, for the counted tokens of this very file, the expected value
per token of KL in both directions and of ``k2`` in both directions
(:math:`\tfrac1N\sum_{\text{counted }(s,t)} D_t`), the expected per-sequence
sum averaged over sequences, and the exact KL at every position.  Because the
layout (lengths, masks) does not depend on the drawn tokens, these are the
exact expectations of the audit's means.

Run from the repository root: ``uv run python scripts/make_example_audit.py``.
Output is deterministic (seed :data:`SEED`).

Source of the estimators audited: J. Schulman, "Approximating KL Divergence"
(2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

__all__ = ["KL_COLS", "MAX_LEN", "N_SEQUENCES", "SEED", "VOCAB", "build_example", "write_example"]

SEED = 20200307  # the blog post's date
VOCAB = 50
N_SEQUENCES = 64
MAX_LEN = 128
SAMPLER_COL = "logp_policy"
OTHER_COL = "logp_ref"
# The exact-KL column for each audit direction (kl_core.audit.statistics.RB_DEFINITIONS).
KL_COLS = {"sampler-other": "kl_policy_ref", "other-sampler": "kl_ref_policy"}
ROOT = Path(__file__).resolve().parents[1]


def _policies(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-position log-probs of the policy and the reference, each (MAX_LEN, VOCAB)."""
    rank = np.arange(1, VOCAB + 1)
    base = -1.1 * np.log(rank) + rng.normal(0.0, 0.3, VOCAB)
    drift = rng.normal(0.0, 1.0, VOCAB)
    gap = rng.normal(0.0, 1.0, VOCAB)
    frac = (np.arange(MAX_LEN) / (MAX_LEN - 1))[:, None]
    policy = base + 0.8 * frac * drift
    ref = policy - (0.15 + 0.35 * frac) * gap
    return special.log_softmax(policy, axis=1), special.log_softmax(ref, axis=1)


def build_example(seed: int = SEED) -> tuple[pd.DataFrame, dict]:
    """Draw the example table and compute its exact KL metadata.

    Parameters
    ----------
    seed : int
        Seed for ``np.random.default_rng``.

    Returns
    -------
    (pandas.DataFrame, dict)
        The table (columns as in the module docstring) and the JSON metadata.
    """
    rng = np.random.default_rng(seed)
    lp_pol, lp_ref = _policies(rng)
    lengths = rng.integers(48, MAX_LEN + 1, N_SEQUENCES)
    prompts = rng.integers(4, 17, N_SEQUENCES)
    u = rng.random((N_SEQUENCES, MAX_LEN))

    cdf = np.cumsum(np.exp(lp_pol), axis=1)
    rows = []
    for s in range(N_SEQUENCES):
        for t in range(lengths[s]):
            # Inverse-CDF draw; the min guards against cdf[-1] rounding below u.
            tok = min(int(np.searchsorted(cdf[t], u[s, t] * cdf[t, -1], side="right")), VOCAB - 1)
            rows.append((s, t, tok, lp_pol[t, tok], lp_ref[t, tok], int(t >= prompts[s])))
    df = pd.DataFrame(
        rows, columns=["sequence_id", "position", "token", SAMPLER_COL, OTHER_COL, "mask"]
    )

    p_pol, p_ref = np.exp(lp_pol), np.exp(lp_ref)
    d = lp_pol - lp_ref  # log(policy / ref) for every token at every position
    per_pos = {
        "kl_sampler_other": (p_pol * d).sum(axis=1),  # KL[policy || ref]
        "kl_other_sampler": (p_ref * -d).sum(axis=1),  # KL[ref || policy]
        "k2_sampler_other": (p_pol * 0.5 * d**2).sum(axis=1),  # E_policy[k2]
        "k2_other_sampler": (p_ref * 0.5 * d**2).sum(axis=1),  # E_policy[r k2] = E_ref[k2]
    }
    # The exact next-token KL at each token's prefix: with position-only
    # distributions, the KL at the token's position.
    position = df["position"].to_numpy()
    df[KL_COLS["sampler-other"]] = per_pos["kl_sampler_other"][position]
    df[KL_COLS["other-sampler"]] = per_pos["kl_other_sampler"][position]
    counted = df[df["mask"] == 1]
    pos = counted["position"].to_numpy()
    seq = counted["sequence_id"].to_numpy()
    exact: dict = {}
    for key, vals in per_pos.items():
        exact[f"{key}_per_token"] = float(vals[pos].mean())
        exact[f"{key}_per_sequence"] = float(np.bincount(seq, weights=vals[pos]).mean())
    exact["per_position"] = {k: [float(x) for x in v] for k, v in per_pos.items()}

    meta = {
        "description": (
            "Toy policy/reference pair over a small vocabulary; tokens sampled from the policy. "
            "Exact expectations are for the counted (mask == 1) tokens of this file."
        ),
        "generator": "scripts/make_example_audit.py",
        "seed": seed,
        "vocab_size": VOCAB,
        "n_sequences": N_SEQUENCES,
        "max_len": MAX_LEN,
        "n_rows": len(df),
        "n_counted": len(counted),
        "columns": {
            "sequence_id": "sequence label",
            "position": "0-based token index within the sequence",
            "token": "token id, 0 .. vocab_size - 1",
            SAMPLER_COL: "log-prob of the token under the policy that sampled it (sampler)",
            OTHER_COL: "log-prob of the token under the reference model (other)",
            "mask": "1 = response token (counted), 0 = prompt token",
            KL_COLS["sampler-other"]: (
                "exact KL[policy||ref] of the next-token distributions at the token's prefix "
                "(the kl_col for direction sampler-other)"
            ),
            KL_COLS["other-sampler"]: (
                "exact KL[ref||policy] of the next-token distributions at the token's prefix "
                "(the kl_col for direction other-sampler)"
            ),
        },
        "audit_args": {
            "sampler_col": SAMPLER_COL,
            "other_col": OTHER_COL,
            "mask_col": "mask",
            "position_col": "position",
            "sequence_col": "sequence_id",
        },
        "kl_cols": dict(KL_COLS),
        "exact": exact,
    }
    return df, meta


def write_example(out_dir: Path, seed: int = SEED) -> tuple[Path, Path]:
    """Write ``example_audit.csv`` and ``example_audit.json`` into ``out_dir``.

    Parameters
    ----------
    out_dir : pathlib.Path
        Directory, created if needed.
    seed : int
        Seed for ``np.random.default_rng``.

    Returns
    -------
    (pathlib.Path, pathlib.Path)
        The CSV and JSON paths.
    """
    df, meta = build_example(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out_dir / "example_audit.csv", out_dir / "example_audit.json"
    # 10 significant digits: exact to ~1e-10 in log r, and keeps the file < 1 MB.
    df.to_csv(csv_path, index=False, float_format="%.10g", lineterminator="\n")
    json_path.write_text(json.dumps(meta, indent=1) + "\n")
    return csv_path, json_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    csv_path, json_path = write_example(args.out_dir)
    meta = json.loads(json_path.read_text())
    ex = meta["exact"]
    print(f"wrote {csv_path} ({csv_path.stat().st_size:,} bytes, {meta['n_rows']} rows)")
    print(f"wrote {json_path}")
    print(
        f"exact per token: KL[policy||ref] = {ex['kl_sampler_other_per_token']:.6f}, "
        f"KL[ref||policy] = {ex['kl_other_sampler_per_token']:.6f}"
    )


if __name__ == "__main__":
    main()
