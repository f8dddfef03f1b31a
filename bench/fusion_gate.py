"""A per-query gate between the fusion's signals, scored on held-out languages.

Issue #22's third round (docs/benchmarks/household.md) left three household
cells below the better single signal that no constant of the shipped fusion
fixes. This harness tries a gate: per query, from features the engine has
at query time, either the shipped fusion or another member of its family
(the keyword share scaled by `s`: 0 leaves the vectors with their rank
bonus and the context step, above 1 leans on the keywords; `inf` is the
keywords-alone order, the rest by cosine, `keywords_first`). It reads the
recordings of `bench/fusion_replay.py record` and nothing else.

Features of a query (all on the model's scale, none tuned per model):
`z` the best cosine's standard deviations above the unrelated level, `m`
the same gap between the best cosine and the second, `cov` the best keyword
hit's grouped coverage (the share of the query's idf it holds, terms the
same hits hold counted once), `ab` the share of the query's idf in terms no
row holds, `agree` whether the two lists' first places are one memory,
`gap` the best bm25's lead over the second, over the best.

Families (each 2 or 3 free parameters, a threshold grid each):

- `zc`: the alternative when z >= Z and cov <= C;
- `zab`: the alternative when z >= Z and ab >= A;
- `mc`: the alternative when m >= M and cov <= C;
- `dis`: the alternative when the tops disagree, z >= Z and cov <= C;
- `gz`: the alternative when z >= Z and gap <= G;
- `zabc`: keyword share halved when z >= Z, ab >= A and cov <= C;
- `kz`: the keyword-leaning alternative when z < Z and cov >= C;
- `two`: `zc`'s vector side and `kz`'s keyword side on one (Z, C).

Z runs 1.5 to 5 by 0.25, C, A and G 0.1 to 1 by 0.05, M 0.1 to 2 by 0.1;
`s` is one of SHARES. The oracle (each query's best alternative, known
only after the fact) bounds what any gate over these alternatives can do.

Each is scored in-sample (parameters chosen on all twelve languages) and
leave-one-language-out: for each language, the parameters are chosen on
the other eleven (both models; fewest cells below the better signal, then
the smallest shortfall, then the best MRR; LoCoMo MiniLM R@10 turns at
least 0.757 and memories 0.642, e5 at most 0.005 below the shipped
fusion's), and the held-out language is scored with them. "Never fire" is
always a candidate, so a family that helps nowhere falls back to shipped.

    /work/shared/py314/run /work/main/.venv/bin/python bench/fusion_gate.py \
        --records /work/main/bench/out/fusion_replay

Results: docs/benchmarks/household.md, "Fourth round".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
import itertools
import math
from pathlib import Path
import pickle
import sys
from typing import TYPE_CHECKING, Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench import fusion_replay as replay
    from custom_components.memory.engine.search import fusion
else:
    from engine.search import fusion
    import fusion_replay as replay

SHIPPED: Final = "decay:a=1,grp=1,w=0.4,z=5,t=1.25,lam=0.3,k=2"
# The alternatives a gate may pick: the shipped family, keyword share times s.
SHARES: Final = (0.0, 0.5, 1.5, 2.0, 2.5, math.inf)
# LoCoMo dev R@10 floors (issue #22): MiniLM turns and memories; e5 may fall
# at most E5_SLACK below the shipped fusion.
MINILM_FLOOR: Final = (0.757, 0.642)
E5_SLACK: Final = 0.005
FEATURES: Final = ("z", "m", "cov", "ab", "agree", "gap")
type Array = np.ndarray[Any, np.dtype[np.float64]]


class _Unpickler(pickle.Unpickler):
    """Read `fusion_replay`'s pickles, whose records it wrote as `__main__`."""

    def find_class(self, module: str, name: str) -> Any:
        """Map `__main__.Record` to the harness's class."""
        if module == "__main__" and name == "Record":
            return replay.Record
        return super().find_class(module, name)


def load(name: str, directory: Path) -> list[replay.Record]:
    """Read one recording (a local pickle of `fusion_replay record`'s own output)."""
    with (directory / f"{name}.pkl").open("rb") as file:
        records: list[replay.Record] = _Unpickler(file).load()
    return records


def features(record: replay.Record) -> tuple[float, ...]:
    """Give the query's (z, m, cov, ab, agree, gap); see the module docstring."""
    level, spread = record.scale or (0.0, 0.0)  # every recorded query has one
    cosines = dict(record.similarity)
    cosines.update(record.semantic)
    best = sorted(cosines.values(), reverse=True)
    unit = spread if spread > 0 else 1.0
    z = (best[0] - level) / unit
    margin = (best[0] - best[1]) / unit if len(best) > 1 else z
    coverage = {i: c for i, _bm25, c in record.keyword}
    if record.weights and coverage:
        coverage = replay.grouped_coverage(record, coverage)
    top_coverage = max(coverage.values(), default=0.0)
    keywords = replay.keyword_alone(record)
    top_vector = min(cosines, key=lambda i: (-cosines[i], i))
    agree = float(bool(keywords) and keywords[0] == top_vector)
    bm25 = sorted((max(-b, 0.0) for _i, b, _c in record.keyword), reverse=True)
    gap = (
        (bm25[0] - (bm25[1] if len(bm25) > 1 else 0.0)) / bm25[0]
        if bm25 and bm25[0]
        else 0.0
    )
    return (z, margin, top_coverage, replay.absent_share(record), agree, gap)


def fusion_spec(share: float) -> str:
    """Name the shipped family with the keyword share times `share`."""
    return f"{SHIPPED},w={0.4 * share:g}" if share != 1 else SHIPPED


def keywords_first(
    keyword: replay.Keyword,
    semantic: replay.Semantic,
    similarity: dict[int, float],
    _scale: Any,
    _record: replay.Record | None = None,
) -> list[fusion.Ranked]:
    """Rank the keyword hits as keywords alone do, then the rest by cosine."""
    cosines = dict(similarity)
    cosines.update(semantic)
    ranked = [fusion.Ranked(i, 1 + s, ()) for i, s in fusion.keyword_scores(keyword)]
    hits = {entry.id for entry in ranked}
    rest = sorted((i for i in cosines if i not in hits), key=lambda i: (-cosines[i], i))
    ranked.extend(
        fusion.Ranked(i, 1 - n / (len(rest) + 1), ()) for n, i in enumerate(rest)
    )
    return ranked


@dataclass(slots=True)
class Table:
    """One recording: per query its group, features and metrics per alternative.

    `metrics[a]` holds per query (R@1, reciprocal rank) on the household
    set, (R@10, R@10) on LoCoMo, for alternative `a` (0 shipped, then
    SHARES in order).
    """

    groups: list[str]
    index: dict[str, np.ndarray[Any, np.dtype[np.int64]]]
    features: dict[str, Array]
    metrics: list[tuple[Array, Array]]


def table(records: Sequence[replay.Record]) -> Table:
    """Rank every question once with each alternative."""
    chosen = [r for r in records if r.kind != "paraphrase"]
    groups = [r.group for r in chosen]
    feats = np.array([features(r) for r in chosen])
    metrics = []
    for share in (1.0, *SHARES):
        fuse = (
            keywords_first
            if math.isinf(share)
            else replay.parse_fusion(fusion_spec(share))
        )
        first, second = [], []
        for record in chosen:
            ranked = replay.ranking(record, fuse)
            if record.kind == "locomo":
                recall = replay.locomo_recall(record, ranked)
                first.append(recall)
                second.append(recall)
                continue
            place = next(
                (n for n, i in enumerate(ranked[:10], 1) if i in record.answers), 0
            )
            first.append(float(place == 1))
            second.append(1 / place if place else 0.0)
        metrics.append((np.array(first), np.array(second)))
    return Table(
        groups=groups,
        index={
            g: np.array([n for n, x in enumerate(groups) if x == g])
            for g in set(groups)
        },
        features={name: feats[:, n] for n, name in enumerate(FEATURES)},
        metrics=metrics,
    )


def singles(records: Sequence[replay.Record]) -> dict[str, tuple[float, float]]:
    """Per household language, the better single signal's (R@1, MRR)."""
    keywords = replay.scores(records, replay.keyword_alone)
    vectors = replay.scores(records, lambda r: replay.ranking(r, None))
    return {
        g: (max(keywords[g][0], vectors[g][0]), max(keywords[g][1], vectors[g][1]))
        for g in keywords
    }


type Gate = Callable[[dict[str, Array]], np.ndarray[Any, np.dtype[np.bool_]]]


def families() -> Iterator[tuple[str, str, Gate, int]]:
    """Every (family, parameters, gate, alternative) of the grids."""
    zs = [round(float(x), 2) for x in np.arange(1.5, 5.01, 0.25)]
    cs = [round(float(x), 2) for x in np.arange(0.1, 1.01, 0.05)]
    ms = [round(float(x), 2) for x in np.arange(0.1, 2.01, 0.1)]
    vector_side = [n for n, s in enumerate(SHARES, 1) if s < 1]
    keyword_side = [n for n, s in enumerate(SHARES, 1) if s > 1]
    for alt, z, c in itertools.product(vector_side, zs, cs):
        yield "zc", f"Z={z},C={c},s={SHARES[alt - 1]}", _zc(z, c), alt
        yield "dis", f"Z={z},C={c},s={SHARES[alt - 1]}", _dis(z, c), alt
        yield "zab", f"Z={z},A={c},s={SHARES[alt - 1]}", _zab(z, c), alt
        yield "gz", f"Z={z},G={c},s={SHARES[alt - 1]}", _gz(z, c), alt
    for z, a, c in itertools.product(zs, cs, cs):
        yield "zabc", f"Z={z},A={a},C={c},s=0.5", _zabc(z, a, c), SHARES.index(0.5) + 1
    for alt, m, c in itertools.product(vector_side, ms, cs):
        yield "mc", f"M={m},C={c},s={SHARES[alt - 1]}", _mc(m, c), alt
    for alt, z, c in itertools.product(keyword_side, zs, cs):
        yield "kz", f"Z={z},C={c},s={SHARES[alt - 1]}", _kz(z, c), alt
    for low, high, z, c in itertools.product(vector_side, keyword_side, zs, cs):
        # Two-sided: the vectors' alternative above (Z, below C), the
        # keywords' below Z at or above C; encoded as alternative low * 10 + high.
        yield (
            "two",
            f"Z={z},C={c},s={SHARES[low - 1]}/{SHARES[high - 1]}",
            _two(z, c),
            low * 10 + high,
        )


def _zc(z: float, c: float) -> Gate:
    return lambda f: (f["z"] >= z) & (f["cov"] <= c)


def _dis(z: float, c: float) -> Gate:
    return lambda f: (f["agree"] == 0) & (f["z"] >= z) & (f["cov"] <= c)


def _gz(z: float, g: float) -> Gate:
    return lambda f: (f["z"] >= z) & (f["gap"] <= g)


def _zab(z: float, a: float) -> Gate:
    return lambda f: (f["z"] >= z) & (f["ab"] >= a)


def _zabc(z: float, a: float, c: float) -> Gate:
    return lambda f: (f["z"] >= z) & (f["ab"] >= a) & (f["cov"] <= c)


def _mc(m: float, c: float) -> Gate:
    return lambda f: (f["m"] >= m) & (f["cov"] <= c)


def _two(z: float, c: float) -> Gate:
    return lambda f: np.where(
        (f["z"] >= z) & (f["cov"] <= c),
        1,
        np.where((f["z"] < z) & (f["cov"] >= c), 2, 0),
    )


def _kz(z: float, c: float) -> Gate:
    return lambda f: (f["z"] < z) & (f["cov"] >= c)


@dataclass(slots=True)
class Outcome:
    """One gate's figures: per model and household language (R@1, MRR); LoCoMo."""

    cells: dict[tuple[str, str], tuple[float, float]]
    locomo: dict[str, tuple[float, float]]


def outcome(tables: dict[str, Table], gate: Gate | None, alt: int) -> Outcome:
    """Apply a gate (None: never fire) to every recording."""
    cells: dict[tuple[str, str], tuple[float, float]] = {}
    locomo: dict[str, tuple[float, float]] = {}
    for name, tab in tables.items():
        fire = (
            gate(tab.features) if gate is not None else np.zeros(len(tab.groups), bool)
        )
        first, second = tab.metrics[0]
        # A two-sided gate gives 1 (alternative alt // 10) or 2 (alt % 10).
        sides = ((1, alt // 10), (2, alt % 10)) if alt >= 10 else ((1, alt),)
        for side, chosen in sides:
            mask = fire.astype(int) == side
            first = np.where(mask, tab.metrics[chosen][0], first)
            second = np.where(mask, tab.metrics[chosen][1], second)
        tally(name, tab, (first, second), (cells, locomo))
    return Outcome(cells, locomo)


def tally(
    name: str,
    tab: Table,
    metrics: tuple[np.ndarray, np.ndarray],
    into: tuple[
        dict[tuple[str, str], tuple[float, float]], dict[str, tuple[float, float]]
    ],
) -> None:
    """Average one recording's per-query metrics into its cells or LoCoMo figures.

    `metrics` is each query's (R@1, reciprocal rank), or a LoCoMo
    question's R@10 twice; household recordings give a cell per language,
    LoCoMo ones R@10 of turns and memories.
    """
    (first, second), (cells, locomo) = metrics, into
    model = name.split("-")[1]
    if name.startswith("locomo"):
        locomo[model] = (
            float(first[tab.index["turns"]].mean()),
            float(first[tab.index["memories"]].mean()),
        )
        return
    for lang in replay.LANGS:
        rows = tab.index[lang]
        cells[model, lang] = (float(first[rows].mean()), float(second[rows].mean()))


def oracle(tables: dict[str, Table]) -> Outcome:
    """Each query's best alternative (reciprocal rank, then R@1): a gate's ceiling."""
    cells: dict[tuple[str, str], tuple[float, float]] = {}
    locomo: dict[str, tuple[float, float]] = {}
    for name, tab in tables.items():
        first = np.max([m[0] for m in tab.metrics], axis=0)
        second = np.max([m[1] for m in tab.metrics], axis=0)
        tally(name, tab, (first, second), (cells, locomo))
    return Outcome(cells, locomo)


def shortfall(
    result: Outcome,
    best: dict[str, dict[str, tuple[float, float]]],
    langs: Sequence[str],
) -> tuple[int, float, float]:
    """(cells below the better signal, total shortfall, mean MRR) over `langs`."""
    below, short, mrr = 0, 0.0, 0.0
    for model in replay.MODELS:
        for lang in langs:
            got, top = result.cells[model, lang], best[model][lang]
            gaps = [max(t - g, 0.0) for g, t in zip(got, top, strict=True)]
            below += any(gap > 1e-9 for gap in gaps)
            short += sum(gaps)
            mrr += got[1]
    return below, short, mrr / (len(langs) * len(replay.MODELS))


def allowed(result: Outcome, base: Outcome) -> bool:
    """LoCoMo's floors: MiniLM's absolute, e5 within E5_SLACK of shipped."""
    minilm, e5 = result.locomo["minilm"], result.locomo["e5"]
    return all(
        v >= f - 1e-9 for v, f in zip(minilm, MINILM_FLOOR, strict=True)
    ) and all(
        v >= b - E5_SLACK - 1e-9 for v, b in zip(e5, base.locomo["e5"], strict=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Score every family in-sample and leave-one-language-out."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=Path, default=replay.OUT)
    args = parser.parse_args(argv)
    recordings = {
        f"{s}-{m}": load(f"{s}-{m}", args.records)
        for s in ("household", "locomo")
        for m in replay.MODELS
    }
    best = {m: singles(recordings[f"household-{m}"]) for m in replay.MODELS}
    tables = {name: table(records) for name, records in recordings.items()}
    base = outcome(tables, None, 0)
    report("shipped", "-", base, base, best, base)
    report(
        "oracle (each query's best alternative)", "-", oracle(tables), None, best, base
    )
    by_family: dict[str, list[tuple[str, Outcome]]] = {"shipped": [("never", base)]}
    free: dict[str, list[tuple[str, Outcome]]] = {}
    for family, params, gate, alt in families():
        result = outcome(tables, gate, alt)
        free.setdefault(family, []).append((params, result))
        if allowed(result, base):
            by_family.setdefault(family, [("never", base)]).append((params, result))
    print("\nWithout LoCoMo's floors, in-sample only:")
    for family, candidates in free.items():
        params, inside = min(
            candidates, key=lambda c: _key(best, list(replay.LANGS))(c[1])
        )
        report(family, params, inside, None, best, base)
    print("\nWith LoCoMo's floors:")
    for family, candidates in by_family.items():
        if family == "shipped":
            continue
        key = _key(best, list(replay.LANGS))
        params, inside = min(candidates, key=lambda c: key(c[1]))
        held: dict[tuple[str, str], tuple[float, float]] = {}
        picks = []
        for lang in replay.LANGS:
            train = [x for x in replay.LANGS if x != lang]
            pick, chosen = min(candidates, key=lambda c: _key(best, train)(c[1]))
            picks.append(f"{lang}:{pick}")
            for model in replay.MODELS:
                held[model, lang] = chosen.cells[model, lang]
        lolo = Outcome(held, {})
        report(family, params, inside, lolo, best, base)
        print(f"    LOLO picks: {' '.join(picks)}")
    return 0


def _key(
    best: dict[str, dict[str, tuple[float, float]]], langs: list[str]
) -> Callable[[Outcome], tuple[int, float, float]]:
    def key(result: Outcome) -> tuple[int, float, float]:
        below, short, mrr = shortfall(result, best, langs)
        return below, round(short, 9), -mrr

    return key


def _below(
    result: Outcome, best: dict[str, dict[str, tuple[float, float]]]
) -> list[str]:
    """Name the cells (model, language) below the better single signal."""
    return [
        f"{m} {lang}"
        for m in replay.MODELS
        for lang in replay.LANGS
        if any(
            g < t - 1e-9
            for g, t in zip(result.cells[m, lang], best[m][lang], strict=True)
        )
    ]


def report(
    family: str,
    params: str,
    inside: Outcome,
    lolo: Outcome | None,
    best: dict[str, dict[str, tuple[float, float]]],
    base: Outcome,
) -> None:
    """Print a family's in-sample and held-out figures."""
    loc = inside.locomo or base.locomo
    print(
        f"{family} [{params}]: in-sample {_figures(inside, best)}; "
        f"LoCoMo MiniLM {loc['minilm'][0]:.3f}/{loc['minilm'][1]:.3f} "
        f"e5 {loc['e5'][0]:.3f}/{loc['e5'][1]:.3f}"
    )
    if lolo is not None:
        print(f"    LOLO {_figures(lolo, best)}")


def _figures(result: Outcome, best: dict[str, dict[str, tuple[float, float]]]) -> str:
    """Say how many cells fall below the better signal, which, and the mean MRRs."""
    langs = list(replay.LANGS)
    below, short, _ = shortfall(result, best, langs)
    mrr = {
        m: float(np.mean([result.cells[m, lang][1] for lang in langs]))
        for m in replay.MODELS
    }
    return (
        f"{below} below (shortfall {short:.3f}: "
        f"{', '.join(_below(result, best)) or 'none'}), "
        f"MRR MiniLM {mrr['minilm']:.3f} e5 {mrr['e5']:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
