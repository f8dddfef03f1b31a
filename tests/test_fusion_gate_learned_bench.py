"""bench/fusion_gate_learned.py: the logistic fit, its training set and the gate's choice.

Small arrays made here, no recordings: the fit finds a feature's sign and
shrinks under its penalty, the training set leaves out the queries where an
alternative changes nothing, and the gate fires the likelier alternative
only above its threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
import sys

import numpy as np

# bench/fusion_gate_learned.py imports its neighbours as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench.fusion_gate import FEATURES, Table
from bench.fusion_gate_learned import Data, choose, fit, predict, train
from bench.fusion_replay import LANGS


def _design(values: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(len(values)), values])


def test_fit_finds_the_feature_that_separates_and_the_penalty_shrinks_it() -> None:
    """A feature that mostly separates gets a positive weight, smaller under lam."""
    x = _design(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]))
    y = np.array([0.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    weight = np.ones(6)
    loose, tight = fit(x, y, weight, 0.01), fit(x, y, weight, 100.0)
    assert loose[1] > tight[1] > 0
    probability = predict(loose, _design(np.array([-3.0, 3.0])))
    assert probability[0] < 0.2
    assert probability[1] > 0.8
    # Under a heavy penalty only the unpenalised intercept speaks: the base rate.
    assert abs(predict(fit(x, y, weight, 1e6), _design(np.zeros(1)))[0] - 0.5) < 1e-3


def _data(
    household: np.ndarray,
    gains: np.ndarray,
    metrics: Sequence[tuple[np.ndarray, np.ndarray]],
) -> Data:
    """One household table, one query per language, and one LoCoMo table."""
    groups = list(LANGS)
    feats = np.column_stack([household] + [np.zeros(len(groups))] * 5)
    tab = Table(
        groups=groups,
        index={g: np.array([n]) for n, g in enumerate(groups)},
        features={f: feats[:, n] for n, f in enumerate(FEATURES)},
        metrics=[(m[0], m[1]) for m in metrics],
    )
    locomo = Table(
        groups=["turns", "memories"],
        index={"turns": np.array([0]), "memories": np.array([1])},
        features={f: np.zeros(2) for f in FEATURES},
        metrics=[(np.array([0.5, 0.5]), np.array([0.5, 0.5]))] * len(metrics),
    )
    return Data(
        tables={"household-minilm": tab, "locomo-minilm": locomo},
        features={"household-minilm": feats, "locomo-minilm": np.zeros((2, 6))},
        gains={"household-minilm": gains, "locomo-minilm": np.zeros((len(metrics), 2))},
        langs={
            "household-minilm": np.array(groups),
            "locomo-minilm": np.array(["turns", "memories"]),
        },
        folds={"household-minilm": np.full(12, -1), "locomo-minilm": np.array([0, 4])},
    )


def test_training_leaves_out_queries_the_alternative_does_not_change() -> None:
    """Queries where the alternative scores as shipped do not move the fit."""
    z = np.linspace(-1.0, 1.0, 12)
    shipped = np.full(12, 0.5)
    changed = np.array([0.0, 1.0] * 6)  # the alternative helps every other query
    gains = np.vstack([np.zeros(12), changed - shipped])
    metrics = [(shipped, shipped), (changed, changed)]
    beta, mean, _ = train(_data(z, gains, metrics), 1, LANGS, False, -1, 1.0)
    # Ties: the same gains, but half the queries changed nothing; their
    # features (extreme values) must not move the fit or its standardisation.
    tied = np.where(np.arange(12) < 6, 0.0, gains[1])
    wild = np.where(np.arange(12) < 6, 100.0, z)
    beta_tied, mean_tied, _ = train(
        _data(wild, np.vstack([np.zeros(12), tied]), metrics), 1, LANGS, False, -1, 1.0
    )
    beta_half, mean_half, _ = train(
        _data(z, np.vstack([np.zeros(12), tied]), metrics), 1, LANGS, False, -1, 1.0
    )
    np.testing.assert_allclose(beta_tied, beta_half)
    np.testing.assert_allclose(mean_tied, mean_half)
    assert not np.allclose(beta, beta_half)
    assert np.isclose(mean[0], z.mean())


def test_the_gate_fires_the_likelier_alternative_above_its_threshold() -> None:
    """The likelier alternative ranks when it passes the threshold; else shipped."""
    shipped = np.zeros(12)
    first = np.ones(12)  # alternative 1 ranks every answer first
    second = np.full(12, 0.5)  # alternative 2 ranks it second
    metrics = [(shipped, shipped), (first, first), (second, second)]
    d = _data(np.zeros(12), np.zeros((3, 12)), metrics)
    p = np.zeros((2, 12))
    p[0, :4] = 0.9  # alternative 1 likely on en, de, fr, es
    p[1, :6] = 0.7  # alternative 2 on the first six; below 1 where both are
    probs = {"household-minilm": p, "locomo-minilm": np.zeros((2, 2))}
    result = choose(d, (1, 2), probs, 0.6)
    got = [result.cells["minilm", lang][1] for lang in LANGS]
    assert got == [1.0] * 4 + [0.5] * 2 + [0.0] * 6
    assert result.locomo["minilm"] == (0.5, 0.5)
    never = choose(d, (1, 2), probs, 0.95)
    assert [never.cells["minilm", lang][1] for lang in LANGS] == [0.0] * 12
