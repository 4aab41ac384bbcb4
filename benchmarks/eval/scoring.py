"""Scoring: where a system's ranked answer first comes from a file that answers, and what that
adds up to per kind of question.

A system answers a question with a ranked list of items (at most :data:`TOP_K`); each item names the
files it comes from (a baseline's paragraph: one file; an engine statement: the file of each of its
evidence). An item is a **hit** when one of its files is one of the question's ``files``. From the
rank of the first hit (1-based, ``None`` when no item in the top :data:`TOP_K` hits):

- hit@k: 1 when the first hit is at rank k or better, else 0;
- reciprocal rank: 1/rank of the first hit, 0 when none is in the top :data:`TOP_K` (so MRR is
  over the top 5).

Each figure is averaged over a kind's questions and over all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TOP_K = 5
"""How many ranked items a system gives for each question, and the cut-off of MRR."""

OVERALL = "overall"


def first_hit(ranked: Sequence[Sequence[str]], answers: Iterable[str], k: int = TOP_K) -> int | None:
    """The 1-based rank of the first of the top ``k`` items that names a file in ``answers``."""
    wanted = set(answers)
    for rank, files in enumerate(ranked[:k], 1):
        if wanted.intersection(files):
            return rank
    return None


def hit_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None, cutoff: int = TOP_K) -> float:
    return 1.0 / rank if rank is not None and rank <= cutoff else 0.0


@dataclass(frozen=True)
class Scores:
    """A group of questions' figures: how many, hit@1, hit@5 and MRR (each a mean, 0 to 1)."""

    count: int
    hit1: float
    hit5: float
    mrr: float


def scores_of(ranks: Sequence[int | None]) -> Scores:
    if not ranks:
        return Scores(0, 0.0, 0.0, 0.0)
    n = len(ranks)
    return Scores(
        count=n,
        hit1=sum(hit_at(r, 1) for r in ranks) / n,
        hit5=sum(hit_at(r, TOP_K) for r in ranks) / n,
        mrr=sum(reciprocal_rank(r) for r in ranks) / n,
    )


def by_kind(results: Iterable[tuple[str, int | None]], kinds: Sequence[str]) -> dict[str, Scores]:
    """Per kind (in ``kinds``' order, a kind with no question scored as empty) and ``overall``."""
    grouped: dict[str, list[int | None]] = {kind: [] for kind in kinds}
    everything: list[int | None] = []
    for kind, rank in results:
        if kind not in grouped:
            raise ValueError(f"unknown kind {kind!r}")
        grouped[kind].append(rank)
        everything.append(rank)
    table = {kind: scores_of(ranks) for kind, ranks in grouped.items()}
    table[OVERALL] = scores_of(everything)
    return table


def markdown_table(rows: Sequence[tuple[str, str, Scores]]) -> str:
    """``(system, kind, scores)`` rows as a Markdown table, figures to two places."""
    lines = ["| system | questions | n | hit@1 | hit@5 | MRR |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for system, kind, s in rows:
        lines.append(f"| {system} | {kind} | {s.count} | {s.hit1:.2f} | {s.hit5:.2f} | {s.mrr:.2f} |")
    return "\n".join(lines)
