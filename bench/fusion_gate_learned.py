"""A learned per-query gate between the fusion's signals (logistic regression).

Issue #22's fourth round (`bench/fusion_gate.py`) tried threshold gates of
2 or 3 parameters over six query features and found none that beats the
shipped fusion under LoCoMo's floors. This harness tries the step that
round left: per alternative of the shipped family (the keyword share times
`s`, `inf` the keywords-alone order; `fusion_gate.SHARES`), an L2-regularised
logistic regression (numpy, Newton's method) over the six features
(`fusion_gate.FEATURES`, standardised on the training queries) predicts
whether the alternative ranks the answer better than the shipped fusion.
It is trained on the queries where the two differ (household reciprocal
rank, LoCoMo R@10), so its probability reads "if it changes anything, it
helps". The gate fires the alternative whose probability is highest when
it exceeds the threshold `t`; otherwise the shipped fusion ranks.

A configuration is one alternative (s = 0, 0.5, 2.5 or inf) or a pair of
one vector-side and one keyword-side, and whether LoCoMo's queries (both
models, weighted to the household queries' total) join the training set. For each, the regularisation `lam` and the threshold are chosen as
`fusion_gate` chooses its parameters (fewest cells below the better single
signal, then shortfall, then MRR, under LoCoMo's floors; never firing is
a candidate) on the training languages' own predictions. Leave one
language out: the models are fitted on the household queries of the other
eleven languages (both models), `lam` and `t` chosen there, and the held-out
language is scored. In-sample: fitted and chosen on all twelve; its LoCoMo
figures are those of that gate (trained on every household language). When
LoCoMo is in the training set, its figures are also given out of fold:
five contiguous blocks of questions, each scored by a gate fitted without
it. Each configuration also gets its in-sample choice without LoCoMo's
floors. First, per alternative, the questions it ranks better and worse
than shipped, and for each question of the shipped fusion's cells below
that an alternative ranks better: its probability (fitted on all twelve
languages, lam 1) and how many household questions that alternative
helps and hurts at that probability or above.

    /work/shared/py314/run /work/main/.venv/bin/python bench/fusion_gate_learned.py \
        --records /work/main/bench/out/fusion_replay

Results: docs/benchmarks/household.md, "Fifth round".
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import itertools
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Any, Final

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

if TYPE_CHECKING:
    from bench import fusion_gate as gate, fusion_replay as replay
else:
    import fusion_gate as gate
    import fusion_replay as replay

type Array = np.ndarray[Any, np.dtype[np.float64]]
type Ints = np.ndarray[Any, np.dtype[np.int64]]

LAMBDAS: Final = (0.01, 0.1, 1.0, 10.0, 100.0)
THRESHOLDS: Final = tuple(round(0.1 + 0.05 * n, 2) for n in range(18))  # 0.1-0.95
LOCOMO_FOLDS: Final = 5
NEVER: Final = 2.0  # a threshold no probability exceeds


def fit(x: Array, y: Array, weight: Array, lam: float) -> Array:
    """Fit an L2-regularised logistic regression; `x` has a leading 1 column.

    Minimises the weighted log loss plus lam / 2 times the squared weights
    (the intercept is not penalised), by Newton's method.
    """
    penalty = lam * np.eye(x.shape[1])
    penalty[0, 0] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (weight * (p - y)) + penalty @ beta
        hess = (x.T * (weight * p * (1.0 - p))) @ x + penalty
        step = np.linalg.solve(hess + 1e-9 * np.eye(x.shape[1]), grad)
        beta = beta - step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return beta


def predict(beta: Array, x: Array) -> Array:
    """Give the probability of each row of `x` (leading 1 column)."""
    result: Array = 1.0 / (1.0 + np.exp(-(x @ beta)))
    return result


@dataclass(slots=True)
class Data:
    """The recordings as arrays: per table its features and gains per alternative."""

    tables: dict[str, gate.Table]
    features: dict[str, Array]  # name -> (queries, 6)
    gains: dict[str, Array]  # name -> (alternatives, queries): metric minus shipped's
    langs: dict[str, np.ndarray[Any, np.dtype[np.str_]]]  # name -> group per query
    folds: dict[str, Ints]  # LoCoMo: block of each query; household: -1


def data(tables: dict[str, gate.Table]) -> Data:
    """Gather features, per-alternative gains and LoCoMo blocks."""
    features, gains, langs, folds = {}, {}, {}, {}
    for name, tab in tables.items():
        features[name] = np.column_stack([tab.features[f] for f in gate.FEATURES])
        second = np.array([m[1] for m in tab.metrics])
        gains[name] = second - second[0]
        langs[name] = np.array(tab.groups)
        block = np.full(len(tab.groups), -1)
        if name.startswith("locomo"):
            for rows in tab.index.values():
                block[rows] = np.arange(len(rows)) * LOCOMO_FOLDS // len(rows)
        folds[name] = block
    return Data(tables, features, gains, langs, folds)


def train(
    d: Data,
    alternative: int,
    langs: Sequence[str],
    locomo: bool,
    skip_block: int,
    lam: float,
) -> tuple[Array, Array, Array]:
    """Fit one alternative's model; give (beta, mean, spread) of the standardisation."""
    rows_, labels, sources = [], [], []
    for name in d.tables:
        gain = d.gains[name][alternative]
        household = name.startswith("household")
        if household:
            keep = np.isin(d.langs[name], langs)
        elif locomo:
            keep = d.folds[name] != skip_block
        else:
            continue
        keep &= np.abs(gain) > 1e-9
        rows_.append(d.features[name][keep])
        labels.append((gain[keep] > 0).astype(float))
        sources.append(np.full(int(keep.sum()), not household))
    rows = np.vstack(rows_)
    y = np.concatenate(labels)
    is_locomo = np.concatenate(sources)
    weight = np.ones(len(y))
    if is_locomo.any() and not is_locomo.all():
        # LoCoMo's queries weigh, together, as much as the household's.
        weight[is_locomo] = (~is_locomo).sum() / is_locomo.sum()
    weight *= len(weight) / weight.sum()
    mean, spread = rows.mean(axis=0), rows.std(axis=0)
    spread[spread == 0] = 1.0
    x = np.column_stack([np.ones(len(y)), (rows - mean) / spread])
    return fit(x, y, weight, lam), mean, spread


def probabilities(
    d: Data,
    alternatives: Sequence[int],
    langs: Sequence[str],
    locomo: bool,
    lam: float,
    skip_block: int = -1,
) -> dict[str, Array]:
    """Per table, (alternatives, queries) probabilities from models fitted on `langs`."""
    out = {
        name: np.zeros((len(alternatives), len(d.tables[name].groups)))
        for name in d.tables
    }
    for n, alternative in enumerate(alternatives):
        beta, mean, spread = train(d, alternative, langs, locomo, skip_block, lam)
        for name, rows in d.features.items():
            x = np.column_stack([np.ones(len(rows)), (rows - mean) / spread])
            out[name][n] = predict(beta, x)
    return out


def choose(
    d: Data, alternatives: Sequence[int], probs: dict[str, Array], threshold: float
) -> gate.Outcome:
    """Score the gate: per query the likeliest alternative above `threshold`."""
    cells: dict[tuple[str, str], tuple[float, float]] = {}
    locomo: dict[str, tuple[float, float]] = {}
    for name, tab in d.tables.items():
        p = probs[name]
        pick = np.where(
            p.max(axis=0) > threshold, np.asarray(alternatives)[p.argmax(axis=0)], 0
        )
        columns = np.arange(len(pick))
        first = np.array([m[0] for m in tab.metrics])[pick, columns]
        second = np.array([m[1] for m in tab.metrics])[pick, columns]
        gate.tally(name, tab, (first, second), (cells, locomo))
    return gate.Outcome(cells, locomo)


type Best = dict[str, dict[str, tuple[float, float]]]


def select(
    d: Data,
    alternatives: Sequence[int],
    langs: Sequence[str],
    locomo: bool,
    best: Best,
    base: gate.Outcome,
    floors: bool = True,
) -> tuple[float, float, dict[str, Array], gate.Outcome]:
    """Choose (lam, t) on `langs`' predictions (LoCoMo's floors unless not `floors`)."""
    key = gate._key(best, list(langs))  # noqa: SLF001 - the fourth round's order
    never = {name: np.zeros((1, len(t.groups))) for name, t in d.tables.items()}
    chosen = (LAMBDAS[0], NEVER, never, base)
    for lam in LAMBDAS:
        probs = probabilities(d, alternatives, langs, locomo, lam)
        for threshold in THRESHOLDS:
            result = choose(d, alternatives, probs, threshold)
            fits = not floors or gate.allowed(result, base)
            if fits and key(result) < key(chosen[3]):
                chosen = (lam, threshold, probs, result)
    return chosen


def out_of_fold_locomo(
    d: Data, alternatives: Sequence[int], lam: float, threshold: float
) -> dict[str, tuple[float, float]]:
    """LoCoMo R@10 when each block of questions is scored by a gate fitted without it."""
    probs = {
        name: np.zeros((len(alternatives), len(t.groups)))
        for name, t in d.tables.items()
    }
    for block in range(LOCOMO_FOLDS):
        fold = probabilities(d, alternatives, replay.LANGS, True, lam, block)
        for name in d.tables:
            rows = d.folds[name] == block
            probs[name][:, rows] = fold[name][:, rows]
    return choose(d, alternatives, probs, threshold).locomo


def label(alternatives: Sequence[int]) -> str:
    """Name alternatives by their share `s`."""
    return "+".join(f"s={gate.SHARES[a - 1]:g}" for a in alternatives)


def params(lam: float, threshold: float) -> str:
    """Name a choice of (lam, t)."""
    return "never" if threshold >= NEVER else f"lam={lam:g},t={threshold:g}"


def usage(d: Data) -> None:
    """Print, per alternative, the questions it ranks better and worse than shipped."""
    for a, share in enumerate(gate.SHARES, 1):
        counts = []
        for name in d.tables:
            gain = d.gains[name][a]
            counts.append(
                f"{name} +{int((gain > 1e-9).sum())}/-{int((gain < -1e-9).sum())}"
            )
        print(f"s={share:g}: better/worse than shipped: {', '.join(counts)}")


def hardest(
    d: Data, base: gate.Outcome, best: Best, alternatives: Sequence[int]
) -> None:
    """Print where the shipped fusion's cells below stand in a gate fitted on all.

    For each question of those cells that an alternative ranks better: its
    probability (fitted on every household question, lam 1) and, among the
    household questions that alternative changes, how many at least as
    likely it helps and hurts: what firing on it would take along.
    """
    probs = probabilities(d, alternatives, replay.LANGS, False, 1.0)
    for cell in gate._below(base, best):  # noqa: SLF001 - the fourth round's cells
        model, lang = cell.split()
        name = f"household-{model}"
        for n, a in enumerate(alternatives):
            for q in d.tables[name].index[lang]:
                if d.gains[name][a][q] <= 1e-9:
                    continue
                p = probs[name][n][q]
                helps = hurts = 0
                for other in d.tables:
                    if other.startswith("household"):
                        high = probs[other][n] >= p
                        helps += int((high & (d.gains[other][a] > 1e-9)).sum())
                        hurts += int((high & (d.gains[other][a] < -1e-9)).sum())
                print(
                    f"{cell}: {label((a,))} ranks its answer better; p {p:.2f}, "
                    f"questions at p or above: {helps} helped, {hurts} hurt"
                )


def main(argv: Sequence[str] | None = None) -> int:
    """Score each configuration in-sample and leave-one-language-out."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=Path, default=replay.OUT)
    args = parser.parse_args(argv)
    recordings = {
        f"{s}-{m}": gate.load(f"{s}-{m}", args.records)
        for s in ("household", "locomo")
        for m in replay.MODELS
    }
    best = {m: gate.singles(recordings[f"household-{m}"]) for m in replay.MODELS}
    d = data({name: gate.table(records) for name, records in recordings.items()})
    base = gate.outcome(d.tables, None, 0)
    usage(d)
    gate.report("shipped", "-", base, base, best, base)
    vector = [gate.SHARES.index(s) + 1 for s in (0.0, 0.5)]
    keyword = [gate.SHARES.index(s) + 1 for s in (2.5, float("inf"))]
    hardest(d, base, best, (*vector, *keyword))
    configs = [(a,) for a in (*vector, *keyword)] + list(
        itertools.product(vector, keyword)
    )
    for alternatives, locomo in itertools.product(configs, (False, True)):
        lam, threshold, _, inside = select(
            d, alternatives, replay.LANGS, locomo, best, base
        )
        held: dict[tuple[str, str], tuple[float, float]] = {}
        picks = []
        for lang in replay.LANGS:
            train_langs = [x for x in replay.LANGS if x != lang]
            lam_l, t_l, probs, _ = select(
                d, alternatives, train_langs, locomo, best, base
            )
            picks.append(f"{lang}:{params(lam_l, t_l)}")
            held_out = choose(d, alternatives, probs, t_l)
            for model in replay.MODELS:
                held[model, lang] = held_out.cells[model, lang]
        name = f"{label(alternatives)}{' +LoCoMo' if locomo else ''}"
        gate.report(
            name, params(lam, threshold), inside, gate.Outcome(held, {}), best, base
        )
        print(f"    LOLO picks: {' '.join(picks)}")
        if locomo and threshold < NEVER:
            oof = out_of_fold_locomo(d, alternatives, lam, threshold)
            print(
                f"    LoCoMo out of fold: MiniLM {oof['minilm'][0]:.3f}/{oof['minilm'][1]:.3f} "
                f"e5 {oof['e5'][0]:.3f}/{oof['e5'][1]:.3f}"
            )
        lam, threshold, _, free = select(
            d, alternatives, replay.LANGS, locomo, best, base, floors=False
        )
        gate.report(
            f"    without floors: {name}",
            params(lam, threshold),
            free,
            None,
            best,
            base,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
