"""bench/household.py --min-scores: what a minimum score lets through.

The report pools every language and counts, per threshold, the queries
whose answer scores at least the threshold out of those that find it at
all, and how many memories pass; device commands, which no memory answers,
only count what passes.
"""

from __future__ import annotations

from pathlib import Path
import sys

import pytest

# bench/household.py imports its neighbours as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench.household import (
    Question,
    Scores,
    load_commands,
    min_score_markdown,
    min_score_rows,
)

ASKED = Question(id="q01", question="q", paraphrase="p", answers=("m01", "m02"))


def scored(*pairs: tuple[str, float]) -> Scores:
    """One query's top 10 as the store returned it: ids, scores best first."""
    scores = Scores()
    scores.add(ASKED, "q", [i for i, _ in pairs], [s for _, s in pairs])
    return scores


def merged(*parts: Scores) -> Scores:
    """Several queries of one language, kind and mode."""
    out = Scores()
    for part in parts:
        out.passing.extend(part.passing)
    return out


def test_answer_passes_and_counts() -> None:
    """The best answer's score decides; a query missing its answer is left out."""
    question = merged(
        scored(("m07", 0.9), ("m02", 0.6), ("m01", 0.3)),  # answers 0.6 and 0.3
        scored(("m01", 0.35), ("m05", 0.2)),
    )
    paraphrase = merged(
        scored(("m09", 0.8), ("m01", 0.25), ("m03", 0.1)),
        scored(("m08", 0.7), ("m09", 0.4)),  # no answer in the top 10
    )
    command = Scores()
    command.passing.append((None, (0.6, 0.3, 0.1)))
    results = {
        "en": {
            "question": {"hybrid": question},
            "paraphrase": {"hybrid": paraphrase},
            "command": {"hybrid": command},
        }
    }
    rows = {
        (row["kind"], row["min_score"]): row
        for row in min_score_rows(results, [0.2, 0.3, 0.5])
    }
    assert {row["mode"] for row in rows.values()} == {"hybrid"}
    assert rows["question", 0.3]["answer_passes"] == 1.0
    assert rows["question", 0.5]["answer_passes"] == 0.5
    assert rows["question", 0.2]["passing_median"] == 2.5  # 3 and 2 pass
    assert rows["question", 0.5]["passing_median"] == 1.0
    both = rows["both", 0.3]
    assert (both["queries"], both["retrievable"]) == (4, 3)
    assert both["answer_passes"] == pytest.approx(2 / 3, abs=1e-4)
    assert rows["both", 0.2]["answer_passes"] == 1.0
    assert rows["both", 0.2]["passing_p90"] == pytest.approx(2.7)  # 2, 2, 2, 3
    assert rows["command", 0.2]["answer_passes"] is None
    assert rows["command", 0.2]["passing_mean"] == 2.0
    assert rows["command", 0.5]["passing_mean"] == 1.0
    table = min_score_markdown(list(rows.values()))
    assert "| command | hybrid | 0.20 | - (of 1) | 2 | 2 | 2.00 |" in table
    assert "| both | hybrid | 0.30 | 66.7 % (of 3/4) | 1.5 | 2.7 | 1.75 |" in table


def test_load_commands(tmp_path: Path) -> None:
    """Only the plain commands of the language asked for."""
    path = tmp_path / "statements.jsonl"
    path.write_text(
        '{"lang": "en", "text": "Kitchen lights off", "command": true}\n'
        '{"lang": "en", "text": "The plumber comes Friday", "command": false}\n'
        '{"lang": "de", "text": "Licht aus", "command": true}\n',
        encoding="utf-8",
    )
    assert load_commands(path, "en") == ["Kitchen lights off"]
    assert load_commands(path, "fr") == []
