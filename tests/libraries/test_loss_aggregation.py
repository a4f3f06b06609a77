"""Tests of kl_core.libraries.loss_aggregation against a line-by-line numpy transcription of verl's agg_loss."""

from __future__ import annotations

import numpy as np
import pytest

from kl_core.libraries.loss_aggregation import (
    LOSS_AGGREGATIONS,
    aggregate,
    kl_coefficient,
    sequence_weights,
)


def verl_agg_loss(loss_mat: np.ndarray, loss_mask: np.ndarray, mode: str) -> float:
    """verl 0.9.1 core_algos.agg_loss with dp_size = 1 and no global sizes, in numpy."""
    if mode == "token-mean":
        return float((loss_mat * loss_mask).sum() / loss_mask.sum())
    if mode in ("seq-mean-token-sum", "seq-mean-token-sum-norm"):
        seq_losses = (loss_mat * loss_mask).sum(axis=-1)
        seq_mask = (loss_mask.sum(axis=-1) > 0).astype(float)
        loss = (seq_losses * seq_mask).sum() / seq_mask.sum()
        if mode == "seq-mean-token-sum-norm":
            loss /= loss_mask.shape[-1]
        return float(loss)
    if mode == "seq-mean-token-mean":
        seq_mask = loss_mask.sum(axis=-1)
        seq_losses = (loss_mat * loss_mask).sum(axis=-1) / (seq_mask + 1e-8)
        seq_mask = (seq_mask > 0).astype(float)
        return float((seq_losses * seq_mask).sum() / seq_mask.sum())
    raise AssertionError(mode)


@pytest.mark.parametrize("mode", list(LOSS_AGGREGATIONS))
def test_aggregate_is_verls_agg_loss(mode):
    rng = np.random.default_rng(3)
    values = rng.normal(size=(7, 12))
    lengths = rng.integers(1, 13, size=7)
    mask = (np.arange(12)[None, :] < lengths[:, None]).astype(float)
    # verl's seq-mean-token-mean adds 1e-8 to each length: relative error ~ 1e-8
    assert aggregate(mode, values, mask) == pytest.approx(verl_agg_loss(values, mask, mode), rel=1e-7)


def test_equal_lengths_make_every_per_token_mode_beta_over_t():
    for mode, agg in LOSS_AGGREGATIONS.items():
        c = kl_coefficient(mode, 0.1, 40)
        assert c == pytest.approx(0.1 / 40 if agg.per_token else 0.1, rel=1e-15), mode
    assert kl_coefficient("seq-mean-token-sum-norm", 0.1, 40, max_length=100) == pytest.approx(0.001)


def test_unequal_lengths_weigh_short_sequences_up_under_grpo():
    w = sequence_weights("seq-mean-token-mean", [10, 40])
    assert w.tolist() == [0.1, 0.025]
    assert np.allclose(sequence_weights("token-mean", [10, 40]), 2 / 50)
    assert np.allclose(sequence_weights("seq-mean-token-sum", [10, 40]), 1.0)
    assert np.allclose(sequence_weights("seq-mean-token-sum-norm", [10, 40], max_length=64), 1 / 64)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="mode"):
        sequence_weights("token-avg", [3])
    with pytest.raises(ValueError, match="lengths"):
        sequence_weights("token-mean", [0, 3])
    with pytest.raises(ValueError, match="max_length"):
        sequence_weights("seq-mean-token-sum-norm", [5, 9], max_length=4)
    with pytest.raises(ValueError, match="beta"):
        kl_coefficient("token-mean", float("nan"), 3)
    with pytest.raises(ValueError, match="length"):
        kl_coefficient("token-mean", 0.1, 0)
    with pytest.raises(ValueError, match="mask"):
        aggregate("token-mean", np.ones((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="mask"):
        aggregate("token-mean", np.ones((2, 3)), np.full((2, 3), 0.5))
    with pytest.raises(ValueError, match="values"):
        aggregate("token-mean", np.ones(3), np.ones(3))
