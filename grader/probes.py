"""Trusted probes: the grader's own check of an implementation, independent of any test's say-so.

The course tests run in the same process as the student's code, so a hostile ``luong.py`` could
make them report anything. Probes cannot be talked into a pass by what the module reports: the
grader draws the inputs (deterministically from the submission's hash, so a regrade sees the
same numbers but nobody can know them in advance), the student's module computes outputs and
gradients inside the sandbox, and the arrays are compared here with the reference and with each
pitfall mutant. A module can still tell that it is probed, as the probe executor runs in its
process, and be wrong elsewhere; it must compute the right numbers under the probes, though
(docs/ARCHITECTURE.md, "What the isolation does not stop").
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from grader.report.model import clipped
from grader.runner.inside import probe as probe_executor
from grader.runner.inside.probe import (
    AGAIN,
    CACHED,
    ECHOED,
    FIRST,
    FROZEN,
    MODEL,
    NEXT,
    RESIZED,
)

# numpy's BLAS on one thread in the grader's own process, as driver.THREAD_ENV keeps it in the
# sandboxes. The trusted side's work (the reference's answers, the pitfall recognisers) runs beside
# the sandboxes, which keep both cores busy, and OpenBLAS's threads then spin waiting for a core:
# the reference's answers took 5 to 12 s of CPU where one thread takes under 3 (measured during a
# CI run, 2026-12-02). Its matrices are small enough that one thread is never slower. Here, where
# that work is, so that tests and benchmarks calling it directly get it too.
threadpool_limits(limits=1, user_api="blas")

SCORES = ("dot", "general", "concat")
EMPTY_ROWS_NAN = ("; the weights are NaN or inf only in rows with no real token: such a row reads nothing "
                  "(weights and context exactly 0), where a softmax over a row of -inf gives NaN")
SUNK_ROW = ("; the weights differ only in the row whose one real token scores far below zero (about -1e36 in "
            "float32, -1e301 in float64), where that token must take all the weight: padding filled with a finite "
            "number, however low (-1e9, np.finfo(...).min), outweighs it; fill padding with -inf")


@dataclass(frozen=True)
class Band:
    """A dtype, a range of widths and the sizes of two reads: one numbers case per score.

    Red team rounds 11 to 18 passed modules wrong only where no band looked: above the widest
    width drawn, from 12 tokens, for one row (round 14), above width 64, from 11 rows or 41 tokens
    (round 17), and then where two ordinary conditions met that no band drew together: float64
    at widths 9 to 64, float32 at widths up to 8, widths 33 to 64 with 12 tokens or more or with
    11 rows or more, widths over 64 with one row (round 18). So the bands are a pairwise design
    over four levels of width (1-8, 9-32, 33-64, 65-128): each level meets both dtypes, a first
    read of 3 to 11 and of 12 to 40 tokens (2 to 10 rows), and a resized read of one row with
    padding and of a training batch (11 to 32 rows of 41 to 48 tokens); two bands give every score
    its one- and two-token sources. In each band one drawn score takes a power of two (_width):
    the widths models use, where a module scaled only at 16, 32 and 64 passed 4 grades of 6 (red
    team, round 19). A module wrong only where three such conditions meet, or beyond every band's
    bounds (from width 129), can still pass: no finite probe reaches every case. Not larger:
    each read returns gradients of the keys' size, and a module that loops in Python over rows
    and tokens must finish in the probe's time."""

    dtype: str
    widths: tuple[int, int]  # d, as integers(low, high)
    lengths: tuple[int, int]  # the first read's source length, as integers(low, high)
    resized: str = "small"  # the resized read's batch: SMALL, ONE_ROW or TRAINING
    alike_later_rows: bool = False  # the next read's later step: one padded row repeated (else no padding)

    @property
    def label(self) -> str:
        """How a report names the band after the score: "dot in float32, width 33-64, 12-40 tokens"."""
        dtype = " in float32" if self.dtype == "float32" else ""
        return (f"{dtype}, width {self.widths[0]}-{self.widths[1] - 1}, "
                f"{self.lengths[0]}-{self.lengths[1] - 1} tokens")


SMALL, ONE_ROW, TRAINING = "small", "one row", "training batch"
TRAINING_LENGTHS = (41, 49)  # a training batch's source lengths, as integers(low, high)
# rows drawn at random beside _mask's made ones: a training batch of 11 to 32 rows (round 20 passed a
# module wrong only from 15 rows, where the batches stopped at 14)
RANDOM_ROWS = {SMALL: (0, 4), TRAINING: (5, 27)}
SHORT, SENTENCE = (3, 12), (12, 41)  # the first read's source lengths
# Float64 at width 1 alone would hide a scale by 1/sqrt(d): its narrowest band starts at 2 in float32.
NUMBERS = (Band("float64", (1, 9), SENTENCE),
           Band("float32", (9, 33), SENTENCE, ONE_ROW, alike_later_rows=True),
           Band("float32", (33, 65), SHORT),
           Band("float32", (65, 129), SHORT, TRAINING, alike_later_rows=True),
           Band("float64", (65, 129), SENTENCE, ONE_ROW),
           Band("float32", (2, 9), SHORT, TRAINING),
           Band("float64", (33, 65), SENTENCE, ONE_ROW, alike_later_rows=True),
           Band("float64", (9, 33), SHORT, TRAINING),
           Band("float32", (33, 65), SENTENCE, TRAINING, alike_later_rows=True),
           Band("float64", (2, 9), SHORT, ONE_ROW))
# rtol, and atol per unit of the largest magnitude in the element's row (see _same)
TOLERANCES = {"float64": (1e-6, 1e-9), "float32": (1e-4, 1e-5)}
SUNK_EXPONENT = {"float32": 120, "float64": 1000}  # how far below zero _sunk's token scores, as a power of two
SLACK_PER_ROUNDING = 4.0  # the reference's measured float32 rounding, as absolute tolerance (rounding_slack)
Slack = Mapping[str, np.ndarray]
# Names that are no score (course test: LuongAttention(d, "cosine") raises a ValueError naming it),
# each tried in every grade: two drawn per grade failed an alias for general ("bilinear") in some
# grades and passed it in others, as a comment changed the draw (red team, round 11).
# other papers' and libraries' names (OpenNMT-py calls concat "mlp"), and the contract's in other
# forms: a module that lower-cased and stripped the name passed (red team, round 21)
NOT_SCORES = ("cosine", "additive", "bilinear", "location", "scaled_dot", "mlp", "Dot", "GENERAL", "concat ")
CONTRACT = "contract"
# The contract case's outputs as a report names them: as_a_module, the name of its answer's field,
# told a student nothing (red team, round 28)
CONTRACT_WORDS = {"parameters": "parameters and checkpoints", "as_a_module": "as a training loop uses it"}
REPLAYED_PER_SCORE = 3  # differing cases of each score the pitfalls' recognisers replay (_replayed)
# float32's exp overflows above about 88.7, float64's above 709; a module that clips scores at
# 1000 "for stability" passed float32's (red team, round 19)
LARGE_SCORES = {"float32": 200.0, "float64": 2000.0}
MAX_QUOTED_CHARS = 200  # of any student-derived text a disagreement quotes
# The reads of a numbers case, by the prefix of their outputs' names (runner/inside/probe.py), in
# the order a disagreement names them; the first read's outputs have no prefix.
READS = ("", CACHED, FROZEN, NEXT, RESIZED, CACHED + RESIZED, CACHED + NEXT, CACHED + AGAIN, FROZEN + RESIZED, MODEL)
FIRST_READ = FIRST
OF_NO_READ = frozenset({*ECHOED, "dtypes"})  # what a case's answer holds besides the reads' outputs
# a read's, in its order (the reads from a given proj last: the rest tell more when they differ too)
FLOW = ("proj", "scores", "scores_from_proj", "weights", "context", "attentional", "scores_from_given_proj",
        "weights_from_given_proj")
MAX_OUTPUTS_NAMED = 8  # of a line's outputs that differ; more, and it names the first of FLOW (_differing)
# How a verdict's one line begins when the probes had no answer to compare (grading._probe_verdict):
# the probe run timed out or crashed, or its answer could not be read
PROBE_RUN, UNREADABLE = "the probe run ", "unreadable probe answer"
# In a disagreement line, the reads named after its outputs (by_read's parentheses), and any
# read named at all (those, or the read an exception came from): the lines a legend of the reads
# explains, unlike a probe run that timed out or crashed.
OUTPUTS_NAMED = re.compile(r"\((every read|reads? )")
NAMES_READS = re.compile(rf"{OUTPUTS_NAMED.pattern}|\(in the ")
# What np.savez writes, and so all an answer may hold: numbered cases' arrays of bools, numbers or text.
ANSWER_MEMBER = re.compile(r"case\d+\..+\.npy", re.DOTALL)
ANSWER_DTYPE_KINDS = "biufU"
NPY_MAGIC = b"\x93NUMPY"
NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
NPY_HEADER_LENGTHS = {(1, 0): struct.Struct("<H"), (2, 0): struct.Struct("<I")}  # the field after the version
ZIP_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a member's local header (APPNOTE 4.3.7), as zipfile reads it
ZIP_LOCAL_SIGNATURE = b"PK\x03\x04"
SAVEZ_ZIP_FLAGS = 0x08 | 0x800  # data descriptor, UTF-8 name; never encryption (0x01) or patch data (0x20)
MAX_CODE_POINT, SURROGATES = 0x10FFFF, range(0xD800, 0xE000)  # text holds Unicode scalar values only


@dataclass(frozen=True)
class ProbeVerdict:
    agree: bool
    disagreements: tuple[str, ...]
    behaves_like: tuple[str, ...]


def draw_cases(seed: int, reference) -> bytes:
    """Every score at each dtype (rows as ``_mask`` draws them; the parameters named and shaped as
    the ``reference`` module names them at the drawn width), then the contract case."""
    rng = np.random.default_rng(seed)
    rounded = rng.integers(len(SCORES), size=len(NUMBERS))  # which score's case takes a power of two, by band
    kinds = [(score, band, index == rounded[place]) for place, band in enumerate(NUMBERS)
             for index, score in enumerate(SCORES)]
    cases = [_numbers_case(rng, reference, score, band, resized_length, power_of_two)
             for (score, band, power_of_two), resized_length in zip(kinds, _resized_lengths(rng))]
    cases.append(_contract_case(rng))
    return _npz({f"case{index}.{key}": value for index, case in enumerate(cases) for key, value in case.items()})


def _npz(fields: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **fields)
    return buffer.getvalue()


def workload() -> str:
    """What the probes ask of a module, in words, as NUMBERS and _mask make it (a module too slow
    for the probe run's deadline is told this)."""
    widths = max(band.widths[1] for band in NUMBERS) - 1
    lengths = max(*(band.lengths[1] for band in NUMBERS), TRAINING_LENGTHS[1]) - 1
    return (f"every score in both dtypes, at widths up to {widths}, sources up to {lengths} tokens and batches "
            f"up to {_most_rows()} rows, several times")


def resized_reads() -> str:
    """What the resized reads are, in words, by the cases' labels (for the report's legend)."""
    named = {kind: " and ".join(f"'{band.label.lstrip(', ')}'" for band in NUMBERS if band.resized == kind)
             for kind in (ONE_ROW, TRAINING)}
    return (f"down to one token; one row in the cases {named[ONE_ROW]}; a training batch, up to {_most_rows()} "
            f"rows of up to {TRAINING_LENGTHS[1] - 1} tokens, in the cases {named[TRAINING]}")


def _most_rows() -> int:
    """The largest batch a read is given: a training batch's (_sunk adds its row to small ones only)."""
    return MADE_ROWS + max(high for _, high in RANDOM_ROWS.values()) - 1


def _resized_lengths(rng: np.random.Generator) -> np.ndarray:
    """The source length of each numbers case's resized read, in the cases' order (the first
    read's is from NUMBERS' lengths): for each score, 1 in one drawn band and 2 in another, which
    the contract allows and the course tests never use (a ``squeeze()`` that drops the length
    axis of a one-token source, a branch on short sources: red team, round 11), and from 1 to 11
    in the rest, but a training batch's (TRAINING_LENGTHS). Every score in every grade: two drawn
    cases in all left a score without a one-token read in half the grades (red team, round 14).
    A band whose resized read is one row reads three tokens or more there, so that the row has
    padding and more than one real token (_mask), or a module that forgets the mask, or scores
    wrongly, for one row would not show: one token takes all the weight whatever it scores (red
    team, rounds 15 and 16)."""
    resized = np.array([band.resized for band in NUMBERS])
    lengths = rng.integers(1, 12, size=(len(NUMBERS), len(SCORES)))
    lengths[resized == ONE_ROW] = np.maximum(lengths[resized == ONE_ROW], 3)
    training = resized == TRAINING
    lengths[training] = rng.integers(*TRAINING_LENGTHS, size=(int(training.sum()), len(SCORES)))
    for score in range(len(SCORES)):
        lengths[rng.choice(np.flatnonzero(resized == SMALL), size=2, replace=False), score] = (1, 2)
    return lengths.ravel()


def _numbers_case(rng: np.random.Generator, reference, score: str, band: Band,
                  resized_length: int, power_of_two: bool) -> dict[str, np.ndarray]:
    # Widths and lengths vary (the course tests use d = 2 and 3 among others, a decoder widths in
    # the tens), so a module that only works at the sizes it was tried on does not agree by luck:
    # the band says where (see Band). The rows come in a drawn order and number; the next read has
    # the first's shape (a module that keeps what it built for a shape must not agree) but no empty
    # row, as a training batch's mask has none (_lengths_mask), and its later step's rows all alike
    # (_next_read_masks); the resized one another shape. One row of the first read scores a real
    # position LARGE_SCORES[dtype] (see _overflowing), and one put in scores its only real token far below
    # zero (_sunk).
    d = _width(rng, band.widths, power_of_two)
    first = (int(rng.integers(*band.lengths)), int(rng.integers(*RANDOM_ROWS[SMALL])))
    case = {"kind": np.array("numbers"), "dtype": np.array(band.dtype), "d": np.array(d), "score": np.array(score),
            "seed": np.array(rng.integers(1 << 31))}
    resized_rows = None if band.resized == ONE_ROW else int(rng.integers(*RANDOM_ROWS[band.resized]))
    shapes = {"": first, NEXT: first, RESIZED: (int(resized_length), resized_rows)}  # (length, random rows)
    batch = 0
    for step, (length, rows) in shapes.items():
        if step == NEXT:
            mask, later_mask = _next_read_masks(rng, length, batch, band.alike_later_rows)
        else:
            mask, later_mask = _mask(rng, length, rows), _later_mask(rng, length, rows)
        batch = len(mask)
        case.update({
            step + "query": rng.normal(size=(batch, d)),
            step + "later_query": rng.normal(size=(batch, d)),
            step + "later_mask": later_mask,
            step + "keys": rng.normal(size=(batch, length, d)),
            step + "mask": mask,
            step + "up_context": rng.normal(size=(batch, d)),
            step + "up_weights": rng.normal(size=(batch, length)),
            step + "up_attentional": rng.normal(size=(batch, d)),
        })
    for name, parameter in reference.LuongAttention(d, score).named_parameters():
        for prefix in ("param:", NEXT + "param:"):
            case[prefix + name] = rng.normal(size=parameter.shape) / np.sqrt(parameter.shape[-1])
    _overflowing(rng, case, score, besides=_sunk(rng, case, score))
    _changed_key(rng, case)
    return case


def _changed_key(rng: np.random.Generator, case: dict[str, np.ndarray]) -> None:
    """Draw the one real position at which the probe's changed keys differ from the first read's
    (the probe's _changed_keys), and the key put there: in a row with upstream gradients, since
    _overflowing's and _sunk's rows, which have none, are built on their keys."""
    rows = [row for row in np.flatnonzero(case["mask"].any(axis=1)) if case["up_attentional"][row].any()]
    row = int(rows[rng.integers(len(rows))])
    case["changed_at"] = np.array([row, int(rng.choice(np.flatnonzero(case["mask"][row])))])
    case["changed_key"] = rng.normal(size=int(case["d"]))


def _width(rng: np.random.Generator, widths: tuple[int, int], power_of_two: bool) -> int:
    """A width drawn from ``widths``; with ``power_of_two``, one of the powers of two there, if any."""
    powers = [2**k for k in range(widths[1].bit_length()) if widths[0] <= 2**k < widths[1]]
    return int(rng.choice(powers)) if power_of_two and powers else int(rng.integers(*widths))


def _overflowing(rng: np.random.Generator, case: dict[str, np.ndarray], score: str, besides: int | None) -> None:
    """Give one row with real tokens a query that scores its longest projected key LARGE_SCORES[dtype],
    and its next longest 3 less where the width allows, so that exp overflows
    unless the softmax subtracts the row's maximum first (as the substrate's does), and a module
    that caps the scores instead (below the second) weighs the two alike where the reference
    gives 0.95 and 0.05. The row's upstream gradients are zero, as its gradients would sum terms
    too large for float32's tolerance. The concat score is bounded by its tanh: no row of it is.
    Not row ``besides``, the one _sunk made."""
    if score == "concat":
        return
    rows = [row for row in np.flatnonzero(case["mask"].any(axis=1)) if row != besides]
    row = rows[rng.integers(len(rows))]
    keys = case["keys"][row][case["mask"][row]]
    projected = keys @ case["param:score_proj.weight"].T if score == "general" else keys
    top = projected[np.argsort(-np.einsum("sd,sd->s", projected, projected))[:2]]
    large = LARGE_SCORES[str(case["dtype"])]
    targets = np.array([large, large - 3.0])[: len(top)]
    if len(top) < 2 or np.linalg.matrix_rank(top) < 2:
        top, targets = top[:1], targets[:1]
    case["query"][row] = top.T @ np.linalg.solve(top @ top.T, targets)  # the least-norm query scoring them so
    _without_upstream_gradient(case, row)


def _sunk(rng: np.random.Generator, case: dict[str, np.ndarray], score: str) -> int | None:
    """Put in a row, at a drawn place of the first read's batch, with one real token scored
    -2**SUNK_EXPONENT[dtype] or a little lower (about -1e36 in float32, -1e301 in float64) and
    padding elsewhere, so that padding filled with any finite number above that (-1e4, -1e9,
    -1e30: the chapter says -inf) takes the row's weight, where the reference gives the token
    all of it. Return where it went.

    One real token, so that every correct softmax gives it exactly 1 at any depth: with several,
    one written as exp(e - logsumexp(e)) loses the bits of log n beside such a score, and deep
    rows of several tokens failed it in every grade (red team, round 12). Exact, so that every
    correct way of computing the row agrees bit for bit: the token's key is one unit vector e_j,
    the padding's are zero, and the query is a power of two times e_m, so each score is one
    product (dot: m = j; general: W_a[m, j] times the power). The attentional state then holds
    that power in component m of h, so m is the column of W_c's h half (in both weight sets)
    furthest from zero, which keeps every element of W_c [c ; h] far from zero and its tanh
    exactly +-1. The row's upstream gradients are zero, as in _overflowing. Not concat, which its
    tanh bounds."""
    if score == "concat":
        return None
    batch, length = case["mask"].shape
    d, dtype = int(case["d"]), str(case["dtype"])
    h_columns = np.stack([case[prefix + "combine.weight"][:, d:] for prefix in ("param:", NEXT + "param:")])
    m = int(np.argmax(np.abs(h_columns).min(axis=(0, 1))))
    if score == "general":
        j = int(np.argmax(np.abs(case["param:score_proj.weight"][m])))
        factor = case["param:score_proj.weight"][m, j]
    else:
        j, factor = m, 1.0
    exponent = min(SUNK_EXPONENT[dtype] - math.floor(math.log2(abs(factor))), np.finfo(dtype).maxexp - 2)
    token, row = int(rng.integers(length)), int(rng.integers(batch + 1))
    keys = np.zeros((length, d))
    keys[token, j] = 1.0
    query = -np.sign(factor) * 2.0 ** exponent * np.eye(d)[m]
    added = {"mask": np.arange(length) == token, "keys": keys, "query": query,
             "later_query": rng.normal(size=d), "later_mask": rng.random(length) < 0.5,
             "up_context": np.zeros(d), "up_weights": np.zeros(length), "up_attentional": np.zeros(d)}
    for name, value in added.items():
        case[name] = np.insert(case[name], row, value, axis=0)
    # and an ordinary row in the next read, which keeps the first's shape: its later step's rows are all alike
    masks = {"mask": _lengths_mask(rng, length, 1)[0], "later_mask": case[NEXT + "later_mask"][0]}
    for name in added:
        ordinary = masks[name] if name in masks else rng.normal(size=case[NEXT + name].shape[1:])
        case[NEXT + name] = np.insert(case[NEXT + name], row, ordinary, axis=0)
    return row


def _without_upstream_gradient(case: dict[str, np.ndarray], row: int) -> None:
    for name in ("up_context", "up_weights", "up_attentional"):
        case[name][row] = 0.0


MADE_ROWS = 6  # the rows _mask makes (at three tokens or more) before it draws any at random


def _mask(rng: np.random.Generator, length: int, random_rows: int | None) -> np.ndarray:
    """Rows full, padded at the end (twice), padded at the start, with real tokens scattered, and
    empty, as many as the length allows, and ``random_rows`` more drawn at random, in a drawn
    order. The contract allows any bool mask and any batch, so a module that tells a row's extent
    or emptiness from its first or last position (or the probe from its row order or number) must
    not agree by luck. With ``random_rows`` None, one drawn row of ``length`` (three or more) with
    two real tokens or more and padding: a batch of one (its padding was left to chance, and a
    one-row fast path that forgets the mask passed a quarter of the grades: red team, round 16)."""
    if random_rows is None:
        row = rng.random(length) < 0.5
        first, second, padded = rng.permutation(length)[:3]
        row[[first, second]], row[padded] = True, False
        return row[np.newaxis]
    positions = np.arange(length)
    rows = [positions < length, positions < 0]
    if length >= 2:
        rows += [positions < rng.integers(1, length), positions >= rng.integers(1, length)]
    if length >= 3:
        rows += [positions < rng.integers(2, length), rng.permutation(length) < rng.integers(1, length)]
    rows += [rng.random(length) < 0.5 for _ in range(random_rows)]
    return np.stack(rows)[rng.permutation(len(rows))]


def _later_mask(rng: np.random.Generator, length: int, random_rows: int | None) -> np.ndarray:
    """A later step's mask as _mask makes it, but for one row: all padding, an empty sentence, whose
    read must be nothing (round 20 passed a module that filled one row's padding with -1e9, as
    pitfall s05 does; the row's first step has real tokens, for a module that forgets the mask)."""
    return _mask(rng, length, random_rows) if random_rows is not None else np.zeros((1, length), dtype=bool)


def _next_read_masks(rng: np.random.Generator, length: int, batch: int,
                     alike: bool) -> tuple[np.ndarray, np.ndarray]:
    """The next read's mask (_lengths_mask) and its later step's, whose rows are all alike: no
    padding at all, as in a batch bucketed by length (red team, round 16: a whole-batch softmax on
    a fast path for such batches), or, with ``alike``, one padded row repeated, as beam search
    repeats a sentence for each beam (round 18: a module wrong only for such a mask passed)."""
    mask = _lengths_mask(rng, length, batch)
    if not alike or length < 2:
        return mask, np.ones_like(mask)
    return mask, np.repeat((np.arange(length) < rng.integers(1, length))[np.newaxis], batch, axis=0)


def _lengths_mask(rng: np.random.Generator, length: int, batch: int) -> np.ndarray:
    """``batch`` rows, each real up to a drawn length and none empty, one of them full: a mask as
    tinyllm's length_mask makes it for a batch of sentences. Every other read has an empty row,
    and a module right only when one is there (a softmax over the whole batch, taken on a fast
    path for batches without one) agreed (red team, round 15)."""
    lengths = rng.integers(1, length + 1, size=batch)
    lengths[rng.integers(batch)] = length
    return np.arange(length) < lengths[:, np.newaxis]


def _contract_case(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The course's test_validation at a drawn width and length, in a drawn order, beside calls
    that must work; plus the width the contract's parameters and ``query_from`` are read at, and
    two different seeds to initialise with."""
    d, batch, length = int(rng.integers(3, 6)), 2, int(rng.integers(3, 6))
    calls: list[dict] = [{"call": "construct", "score": str(name), "d": d, "keyword": "score"}
                         for name in NOT_SCORES]
    for score in SCORES:
        good = {"call": "forward", "score": score, "d": d, "query": [batch, d], "keys": [batch, length, d],
                "mask": [batch, length], "mask_dtype": "bool", "keyword": ""}
        # widths of 1 broadcast, and widths that agree with each other but not with d pass a check
        # of one against the other: modules without either check passed (red team, round 21)
        for call in ("forward", "scores"):
            calls += [{**good, "call": call}, {**good, "call": call, "query": [batch, d + 1]},
                      {**good, "call": call, "keys": [batch, length, d - 1]},
                      {**good, "call": call, "query": [batch, 1]}, {**good, "call": call, "keys": [batch, length, 1]},
                      {**good, "call": call, "query": [batch, d + 1], "keys": [batch, length, d + 1]},
                      {**good, "call": call, "proj": True}]  # proj named, as the contract names it
        bad_masks = [{**good, "mask": [batch, length - 1]}, {**good, "mask": [length, batch]},
                     {**good, "mask_dtype": "float32"}, {**good, "mask_dtype": "int64"}]
        calls += [{**call, "keyword": "mask"} for call in (
            *bad_masks, {**good, "mask": [batch, length, 1]}, {**good, "mask": [length]},
            {**good, "mask_dtype": "uint8"},  # torch's byte masks
            *({**bad, "proj": True} for bad in bad_masks[::2]))]  # the cached path checks the mask too
        calls.append({"call": "construct", "score": score, "d": d, "keyword": "", "rng": True})  # by position
    order = rng.permutation(len(calls))
    first_seed = int(rng.integers(1 << 31))
    return {"kind": np.array(CONTRACT), "d": np.array(d), "scores": np.array(SCORES),
            "seeds": np.array([first_seed, first_seed + 1 + int(rng.integers(1 << 31))]),
            "calls": np.array([json.dumps(calls[i]) for i in order])}


def outputs_of(module, payload: bytes) -> dict[str, np.ndarray]:
    """Run a trusted module (the reference or a pitfall mutant) on the probe cases, here."""
    return read_answer(probe_executor.run(module, payload))


def in_float64(payload: bytes) -> bytes:
    """The same cases with each float32 one computed in float64, from its inputs rounded to
    float32 as the module gets them: the reference's answers to these are its float32 answers
    without their rounding (see rounding_slack)."""
    cases = np.load(io.BytesIO(payload), allow_pickle=False)
    single = {key.partition(".")[0] for key in cases.files
              if key.endswith(".dtype") and str(cases[key]) == "float32"}
    return _npz({key: _in_float64(key, cases[key]) if key.partition(".")[0] in single else cases[key]
                 for key in cases.files})


def _in_float64(key: str, value: np.ndarray) -> np.ndarray:
    """A float32 case's field for in_float64: its dtype float64, its numbers rounded to float32."""
    if key.endswith(".dtype"):
        return np.array("float64")
    return value.astype(np.float32).astype(np.float64) if value.dtype.kind == "f" else value


def rounding_slack(reference: dict[str, np.ndarray], exact: dict[str, np.ndarray]) -> Slack:
    """Per element, SLACK_PER_ROUNDING times how far the reference's float32 answers are from its
    answers computed in float64 (``exact``, from in_float64): where the reference's own rounding
    is large (gradients summed from terms far larger than themselves), a correct module that
    rounds less, or elsewhere, differs by that much. A module computing the softmax in float64
    differed from the reference by 1.4e-5 in a gradient of 0.02 (red team, round 12)."""
    slack = {}
    for key, value in reference.items():
        other = exact.get(key)
        if value.dtype.kind == "f" and other is not None and other.shape == value.shape and other.dtype.kind == "f":
            gap = np.abs(value - other)
            slack[key] = SLACK_PER_ROUNDING * np.where(np.isfinite(gap), gap, 0.0)
    return slack


def read_answer(answer: bytes) -> dict[str, np.ndarray]:
    """Parse an answer that came out of the sandbox, as np.savez writes it: stored (never
    compressed) ``case<i>.<output>.npy`` members of plain bools, numbers or text. Each member's
    header is checked against the member's stored size before its array is made, so neither a
    compressed member (a few megabytes of zeros inflating to gigabytes, outside the sandbox's
    memory cap) nor a header claiming a huge shape can make the grader allocate more than came
    out; the arrays are read-only views of the answer's own bytes. Text may hold Unicode scalar
    values only. Raises ValueError, whatever the bytes provoke: an answer must never crash the
    grader."""
    try:
        with zipfile.ZipFile(io.BytesIO(answer)) as archive:
            members = archive.infolist()
        _check_members(members, len(answer))
        view, headers = memoryview(answer), {}
        return {info.filename.removesuffix(".npy"): _read_member(view, info, headers) for info in members}
    except ValueError as exc:
        raise ValueError(_clip(str(exc))) from None
    except Exception as exc:  # noqa: BLE001 - anything else the bytes provoke is unreadable too
        raise ValueError(_clip(f"not a readable npz archive: {type(exc).__name__}: {exc}")) from None


def _check_members(members: list[zipfile.ZipInfo], answer_bytes: int) -> None:
    """ValueError naming the first few members np.savez would not have written. Together the
    members may declare no more bytes than the answer holds: members quoting each other's bytes
    (a zip bomb made of stored data) could otherwise add up to far more than came out."""
    names = Counter(info.filename for info in members)
    refusals = {
        "compressed arrays are refused": [i.filename for i in members if i.compress_type != zipfile.ZIP_STORED
                                          or i.compress_size != i.file_size],
        "encrypted or otherwise flagged members are refused": [
            i.filename for i in members if i.flag_bits & ~SAVEZ_ZIP_FLAGS],
        "members that are no case's array": [name for name in names if not ANSWER_MEMBER.fullmatch(name)],
        "members given twice": [name for name, count in names.items() if count > 1],
    }
    for refusal, culprits in refusals.items():
        if culprits:
            raise ValueError(f"{refusal}: {', '.join(culprits[:3])}")
    declared = sum(info.file_size for info in members)
    if declared > answer_bytes:
        raise ValueError(f"the members declare {declared} bytes, more than the {answer_bytes} of the answer")


def _read_member(answer: memoryview, info: zipfile.ZipInfo, headers: dict[bytes, tuple]) -> np.ndarray:
    """A member's array, read in place: a stored member's bytes follow its local header. Going
    through zipfile's open and read, and numpy's header parser for each of some 3,000 members,
    took 0.2 s of every grade; ``headers`` holds the headers parsed so far, as many members share one."""
    try:
        start = _data_start(answer, info)
        return _read_npy(answer[start:start + info.file_size], headers)
    except ValueError as exc:
        raise ValueError(f"{info.filename}: {exc}") from None


def _data_start(answer: memoryview, info: zipfile.ZipInfo) -> int:
    """Where the member's data starts in the answer, once its local header is found to be the one
    the directory names (what zipfile's open checks)."""
    at = info.header_offset  # negative when the directory lies about where it is; unpack_from would count back
    fields = ZIP_LOCAL_HEADER.unpack_from(answer, at) if 0 <= at <= len(answer) - ZIP_LOCAL_HEADER.size else None
    name_start = at + ZIP_LOCAL_HEADER.size
    name = fields and bytes(answer[name_start:name_start + fields[-2]]).decode(
        "utf-8" if info.flag_bits & 0x800 else "cp437")
    if fields is None or fields[0] != ZIP_LOCAL_SIGNATURE or name != info.orig_filename:
        raise ValueError("its directory entry points at no local header of that name")
    start = name_start + fields[-2] + fields[-1]  # after the name and the extra field
    if start + info.file_size > len(answer):
        raise ValueError(f"its {info.file_size} bytes run past the answer's end")
    return start


def _read_npy(member: memoryview, headers: dict[bytes, tuple]) -> np.ndarray:
    """The array of an npy ``member``, made only once its header declares exactly the data the
    member holds."""
    if len(member) < len(NPY_MAGIC) + 2 or bytes(member[:len(NPY_MAGIC)]) != NPY_MAGIC:
        raise ValueError("no npy array: it lacks npy's magic string")
    version = (member[len(NPY_MAGIC)], member[len(NPY_MAGIC) + 1])
    if version not in NPY_HEADER_READERS:
        raise ValueError(f"npy format version {version} is refused")
    length_field = NPY_HEADER_LENGTHS[version]
    length_at = len(NPY_MAGIC) + 2
    if len(member) < length_at + length_field.size:
        raise ValueError("its npy header is cut short")
    end = length_at + length_field.size + length_field.unpack_from(member, length_at)[0]
    if end > len(member):
        raise ValueError(f"an npy header of {end} bytes does not fit a member of {len(member)} bytes")
    header = bytes(member[:end])
    if header not in headers:
        headers[header] = NPY_HEADER_READERS[version](io.BytesIO(header[length_at:]))
    shape, fortran_order, dtype = headers[header]
    if dtype.kind not in ANSWER_DTYPE_KINDS:
        raise ValueError(f"dtype {dtype.str} is refused: an answer holds bools, numbers and text")
    declared = math.prod(shape) * dtype.itemsize
    if min(shape, default=0) < 0 or end + declared != len(member):
        raise ValueError(f"a header declaring {dtype.str} {shape} does not fit a member of {len(member)} bytes")
    data = member[end:]
    if dtype.kind == "U":
        _check_code_points(data, dtype)
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran_order else "C")


def _check_code_points(data: bytes, dtype: np.dtype) -> None:
    """ValueError unless the text ``data`` of ``dtype`` holds only Unicode scalar values. numpy
    stores any 32-bit number as a character, but str() of one beyond U+10FFFF raises SystemError
    wherever the grader would quote it, and a surrogate is half a UTF-16 pair, no character: so
    the raw numbers are checked, before anything makes a str of them."""
    codes = np.frombuffer(data, dtype=np.dtype(np.uint32).newbyteorder(dtype.byteorder))
    bad = codes[(codes > MAX_CODE_POINT) | ((codes >= SURROGATES.start) & (codes < SURROGATES.stop))]
    if bad.size:
        raise ValueError(f"text holding U+{int(bad[0]):04X}, which is no Unicode scalar value, is refused")


def _clip(text: str) -> str:
    return clipped(text, MAX_QUOTED_CHARS)


def judge(student: dict[str, np.ndarray], reference: dict[str, np.ndarray],
          pitfalls: Callable[[Sequence[str]], Mapping[str, Sequence[dict[str, np.ndarray]]]],
          slack: Callable[[Sequence[str]], Slack] | None = None) -> ProbeVerdict:
    """Compare the student's arrays with the reference's, and name the pitfalls they reproduce.

    ``pitfalls(cases)`` maps an id to the outputs, in those cases at least, of each recognised
    way into that pitfall. It is called only when the student disagrees with the reference, with
    some of the cases they disagree in (_replayed): running every recogniser on every case costs
    the grade seconds of CPU, an implementation that agrees reproduces none, and a pitfall is
    recognised only where the student differs (_reproduces). ``slack(cases)`` (see rounding_slack)
    widens the absolute tolerance element by element, in those cases at least; it costs a run of
    the reference on those of them in float32, so it is asked only for the cases the student disagrees in without it
    (widening never turns an agreement into a disagreement): a module wrong in the contract's case
    alone cost its grade a float64 run of all thirty numbers cases, some 4 s."""
    differing = _disagreements(student, reference, {}, _cases(reference))
    widened: Slack = slack(tuple(differing)) if differing and slack is not None else {}
    if widened:  # none, and the same comparison would come out the same
        differing = _disagreements(student, reference, widened, differing)
    behaves_like: tuple[str, ...] = ()
    if differing:
        replayed = _replayed(tuple(differing), reference)
        behaves_like = tuple(pitfall for pitfall, ways in sorted(pitfalls(replayed).items())
                             if any(_reproduces(student, reference, outputs, replayed, widened) for outputs in ways))
    return ProbeVerdict(agree=not differing, disagreements=_lines(differing, reference), behaves_like=behaves_like)


def _replayed(differing: Sequence[str], reference: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The cases the pitfalls' recognisers replay: the first REPLAYED_PER_SCORE the student differs
    in, for each score (and the contract case). A pitfall shows in every case of the scores it
    touches, and replaying all thirty on each of the nine ways cost a wrong module's grade some
    five seconds."""
    seen: Counter[str] = Counter()
    chosen = []
    for case in differing:
        score = str(reference.get(f"{case}.score", CONTRACT))
        if seen[score] < REPLAYED_PER_SCORE:
            seen[score] += 1
            chosen.append(case)
    return tuple(chosen)


def compared(disagreements: Sequence[str]) -> bool:
    """Whether disagreements compare answers: not the line saying there was none. Deciding by the
    names of reads in them called a module whose only disagreement was the contract's "no answer
    to compare" (red team, round 28)."""
    return bool(disagreements) and not any(line.startswith((PROBE_RUN, UNREADABLE)) for line in disagreements)


def only_cases(payload: bytes, cases: Sequence[str]) -> bytes:
    """``payload`` with only ``cases`` in it, under the same names (so their answers keep theirs)."""
    archive = np.load(io.BytesIO(payload), allow_pickle=False)
    return _npz({key: archive[key] for key in archive.files if key.partition(".")[0] in cases})


def _disagreements(student: dict[str, np.ndarray], reference: dict[str, np.ndarray], slack: Slack,
                   cases: Iterable[str]) -> dict[str, str]:
    """What differs in each of ``cases`` the student's answers differ in, by case."""
    return {case: text for case in cases
            if (text := _describe_case(case, student, reference, slack)) is not None}


def _lines(disagreements: Mapping[str, str], reference: dict[str, np.ndarray]) -> tuple[str, ...]:
    """A report's line for each thing that differs: the cases it differs in, then what. Cases
    that differ alike share a line: a module whose forward took other argument names was told
    the same TypeError thirty times over, once per score and band (red team, round 26)."""
    cases_of: dict[tuple[bool, str], list[str]] = {}
    for case, text in disagreements.items():  # the contract's case never shares a numbers case's line
        cases_of.setdefault((_is_contract(case, reference), text), []).append(case)
    return tuple(f"{_cases_label(cases, reference)}: {text}" for (_, text), cases in cases_of.items())


def _cases_label(cases: Sequence[str], reference: dict[str, np.ndarray]) -> str:
    """How a line names its cases: the one case's label, or every case, or the scores by band."""
    if len(cases) == 1:
        return CONTRACT if _is_contract(cases[0], reference) else _numbers_label(cases[0], reference)
    every = f"every score ({', '.join(SCORES)}) in every band of widths, lengths"
    if len(cases) == len(NUMBERS) * len(SCORES):
        return f"{every} and dtypes ({len(cases)} cases)"
    dtypes = {_band(case).dtype for case in cases}
    if len(dtypes) == 1 and len(cases) == len(SCORES) * sum(band.dtype in dtypes for band in NUMBERS):
        return f"{every} in {dtypes.pop()} ({len(cases)} cases)"
    by_band: dict[Band, list[str]] = {}
    for case in cases:
        by_band.setdefault(_band(case), []).append(str(reference[f"{case}.score"]))
    return f"{len(cases)} cases (" + "; ".join(", ".join(scores) + band.label for band, scores in by_band.items()) + ")"


def single_precision(cases: Iterable[str], reference: dict[str, np.ndarray]) -> list[str]:
    """Those of ``cases`` run in float32: in_float64 leaves the others as they are, so the
    reference's answers to them are the same, and their rounding_slack 0."""
    return [case for case in cases if str(reference.get(f"{case}.dtype")) == "float32"]


def _cases(outputs: dict[str, np.ndarray]) -> list[str]:
    return sorted({key.partition(".")[0] for key in outputs}, key=lambda case: int(case.removeprefix("case")))


def _case_keys(case: str, outputs: dict[str, np.ndarray]) -> list[str]:
    return [k for k in outputs if k.startswith(case + ".")]


def _tolerance(case: str, reference: dict[str, np.ndarray]) -> tuple[float, float]:
    dtype = reference.get(f"{case}.dtype")
    return TOLERANCES[str(dtype) if dtype is not None else "float64"]


def _alike(a: np.ndarray | None, b: np.ndarray) -> bool:
    """``a`` (the student's) can be compared with ``b`` element by element: it is there, of ``b``'s
    shape, and text where ``b`` is text. Every array came through read_answer, so what is not
    text is bools or numbers, which compare with numbers."""
    return a is not None and a.shape == b.shape and (a.dtype.kind == "U") == (b.dtype.kind == "U")


def _same(a: np.ndarray | None, b: np.ndarray | None, tolerance: tuple[float, float],
          slack: np.ndarray | float = 0.0) -> bool:
    """``a`` (the student's) matches ``b`` (the reference's): text exactly; numbers within the
    tolerance, with NaN and inf where ``b`` has them, and exact zeros where ``b`` has exact zeros
    (padding weights, an empty row's context, gradients that must not reach padding).

    The absolute tolerance grows with the largest finite magnitude (when above 1) in the element's
    row (its last axis): an element summed from terms that large and nearly cancelling keeps
    rounding of their size, whichever order a correct implementation adds them in. Gradients
    added up over three backward passes reach 25 in float32, and the course's own variant, graded
    with a comment added, differed from the reference by 1.7e-5 in one such element (red team,
    round 7). By row, not by array: the row that scores 200 must not loosen the others. And by
    ``slack``, the reference's own rounding where it is measured (rounding_slack), the largest in
    the array: an element small beside its row can still be summed from terms as large as the
    array's others, and where the reference happened to round little, a correct module need not
    (red team, round 17, at widths up to 96 in float32: a correct module 2.0e-5 from the
    reference in an element of 0.07 where the reference's own error was 1.6e-6, in a row whose
    largest was 1.06). The exact zeros keep each element's own."""
    if b is None or not _alike(a, b):
        return False
    if b.dtype.kind == "U":
        return bool(np.array_equal(a, b))
    rtol, atol = tolerance
    slack = slack if np.shape(slack) in ((), b.shape) else 0.0  # measured on the reference's arrays only
    in_array = np.max(slack) if np.size(slack) else 0.0
    finite = np.isfinite(b)
    if not (np.all(np.isfinite(a) == finite) and _zeros_kept(a, b, slack)):
        return False
    return _close_where_finite(a, b, finite, rtol, atol, in_array) or bool(
        np.all(np.isclose(a, b, rtol=rtol, atol=atol * _row_scale(b) + in_array, equal_nan=True)))


def _close_where_finite(a: np.ndarray, b: np.ndarray, finite: np.ndarray, rtol: float, atol: float,
                        in_array: np.floating | float) -> bool:
    """What np.isclose in _same computes, for a ``b`` that is finite throughout (``finite``, and
    so is ``a``: _same checked), as a sufficient condition: False sends _same to isclose itself.
    A judge compares some 4,500 arrays, most of them small, and isclose's own checks and
    conversions, with _row_scale's, were most of a judge's time (0.4 s of a grade's CPU)."""
    if not finite.all():
        return False
    exact = b.dtype.kind != "f"
    b = b.astype(np.result_type(b, 1.0)) if exact else b  # as isclose compares it
    size = np.abs(b)
    scale = 1.0 if exact or not b.ndim or not b.size else np.maximum(size.max(axis=-1, keepdims=True), 1.0)
    with np.errstate(invalid="ignore"):  # the same expression as isclose's, _row_scale's scale in atol
        return bool(np.all(np.abs(a - b) <= atol * scale + in_array + rtol * size))


def _row_scale(b: np.ndarray) -> np.ndarray | float:
    """The largest finite magnitude along each row of ``b`` (its last axis), at least 1."""
    if b.dtype.kind != "f" or b.ndim == 0 or b.size == 0:
        return 1.0
    finite = np.where(np.isfinite(b), np.abs(b), 0.0)
    return np.maximum(finite.max(axis=-1, keepdims=True), 1.0)


def _zeros_kept(a: np.ndarray, b: np.ndarray, slack: np.ndarray | float = 0.0) -> bool:
    """``a`` is exactly 0 wherever ``b`` is (same shape), but where ``b``'s zero is its rounding's:
    ``slack`` says the reference computed in float64 gives another number there."""
    return bool(np.all(a[(b == 0) & (np.asarray(slack) == 0)] == 0))


def _reproduces(student, reference, mutant, differing: Sequence[str], slack: Slack) -> bool:
    """In some of the cases ``differing`` (where the student differs from the reference), the
    student's every output equals the mutant's: the pitfall is recognised even beside an unrelated
    bug elsewhere. Only those: a module wrong in one case had every case compared again for each
    of the nine ways, some 10 s of a grade."""
    for case in differing:
        tolerance = _tolerance(case, reference)
        if all(_same(student.get(k), mutant.get(k), tolerance, slack.get(k, 0.0)) for k in _case_keys(case, reference)):
            return True
    return False


def _describe_case(case: str, student: dict[str, np.ndarray], reference: dict[str, np.ndarray],
                   slack: Slack) -> str | None:
    """What differs in a case whose answers differ: a line's text after its cases (_lines).

    The checks are meant to describe whatever a well-formed answer holds. Should some array still
    make one raise, that is this case's disagreement: an answer must never crash the grader (the
    grade would end in a traceback and no report). Only the description is guarded; the cases'
    label comes from the reference alone."""
    try:
        problems = _problems(case, _is_contract(case, reference), student, reference, slack)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, see above
        problems = [f"the answer could not be compared: {type(exc).__name__}: {_clip(str(exc))}"]
    return "; ".join(problems) if problems else None


def _is_contract(case: str, reference: dict[str, np.ndarray]) -> bool:
    return str(reference.get(f"{case}.kind")) == CONTRACT


def _problems(case: str, contract: bool, student: dict[str, np.ndarray],
              reference: dict[str, np.ndarray], slack: Slack) -> list[str]:
    """What differs in a case; nothing when it agrees."""
    error = student.get(f"{case}.error")
    if error is not None:
        return [f"the implementation raised {_clip(str(error))}"]
    tolerance = _tolerance(case, reference)
    wrong = [k for k in _case_keys(case, reference)
             if not _same(student.get(k), reference[k], tolerance, slack.get(k, 0.0))]
    if not wrong:
        return []
    if contract:
        return _contract_problems(case, wrong, student, reference)
    return _numbers_problems(case, wrong, student, reference, slack)


def _numbers_label(case: str, reference: dict[str, np.ndarray]) -> str:
    """The score, and which of NUMBERS it is run at."""
    return str(reference[f"{case}.score"]) + _band(case).label


def _band(case: str) -> Band:
    """Which of NUMBERS a numbers case is run at, by its place (they come in its order)."""
    return NUMBERS[int(case.removeprefix("case")) // len(SCORES)]


def _entry_should_be(ours: str, theirs: str) -> str:
    """What a "dtypes" entry should say: its dtype where it names the same output, the whole
    entry where it names another (a module registering its parameters in another order was told
    'grad:v.weight float64 (should be float64)': honest students, round 30)."""
    output, _, dtype = ours.rpartition(" ")
    return dtype if theirs.rpartition(" ")[0] == output else ours


def _numbers_problems(case: str, wrong: list[str], student: dict[str, np.ndarray],
                      reference: dict[str, np.ndarray], slack: Slack) -> list[str]:
    """What differs in a numbers case, in the order the values flow."""
    names = [k.partition(".")[2] for k in wrong]
    given = [k.partition(".")[2] for k in _case_keys(case, reference)]
    problems = []
    misfits = [n for n, k in zip(names, wrong) if not _alike(student.get(k), reference[k])]
    if misfits:
        problems.append(f"wrong dtype or shape, or missing: {by_read(misfits, given)}")
    text = [(n, k) for n, k in zip(names, wrong) if n not in misfits and reference[k].dtype.kind == "U"]
    for name, key in text:  # a "dtypes" line is "<output> <dtype>"; an echoed input is one word
        differing = [f"{_clip(str(theirs))} (should be {_entry_should_be(ours, str(theirs))})"
                     for ours, theirs in zip(reference[key].ravel().tolist(), student[key].ravel().tolist())
                     if ours != theirs]
        problems.append(f"{name}: " + ", ".join(differing[:4]) if differing else f"{name} differ")
    rest = [(n, k) for n, k in zip(names, wrong) if n not in misfits and (n, k) not in text]
    nonfinite = [n for n, k in rest if not np.all(np.isfinite(student[k]))]
    if nonfinite:
        problems.append(f"NaN or inf in: {_differing(nonfinite, given)}"
                        + (EMPTY_ROWS_NAN if _nan_weights_only_in_empty_rows(case, nonfinite, student, reference) else ""))
    numeric = [(n, k) for n, k in rest if n not in nonfinite]
    if numeric:
        worst = max(float(np.max(np.abs(student[k] - reference[k]))) for _, k in numeric)
        zeros = [n for n, k in numeric if not _zeros_kept(student[k], reference[k], slack.get(k, 0.0))]
        problems.append(f"differs in {_differing([n for n, _ in numeric], given)}, max abs difference {worst:.3g}"
                        + (f"; not exactly 0 where it must be: {_differing(zeros, given)}" if zeros else "")
                        + (SUNK_ROW if "weights" in dict(numeric) and _differs_only_in_sunk_rows(case, student, reference)
                           else ""))
    return problems


def _differs_only_in_sunk_rows(case: str, student: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> bool:
    """Whether the first read's weights differ only in _sunk's row, known by the reference's
    scores there. A module filling padding with np.finfo(np.float32).min differed in weights and
    thirteen more outputs by 1, and was told nothing of why (honest students, round 30)."""
    key = f"{case}.weights"
    theirs, ours, scores = student[key], reference[key], reference[f"{case}.scores"]
    sunk = np.min(scores, axis=-1) <= -(2.0 ** (min(SUNK_EXPONENT.values()) - 1))
    differing = np.max(np.abs(theirs - ours), axis=-1) > _tolerance(case, reference)[0]
    return bool(differing.any()) and not np.any(differing & ~sunk)


def _nan_weights_only_in_empty_rows(case: str, nonfinite: Sequence[str], student: dict[str, np.ndarray],
                                    reference: dict[str, np.ndarray]) -> bool:
    """Whether the weights are NaN or inf only in rows the reference weighs 0 throughout: rows
    with no real token. A softmax over a row of -inf gives NaN there, which then spreads to every
    output the row reaches, and a line naming forty outputs did not say where it began."""
    weights = [f"{case}.{name}" for name in nonfinite if _read_and_output(name)[1].endswith("weights")]
    return bool(weights) and all(
        np.all(np.isfinite(student[key]) | np.all(reference[key] == 0, axis=-1, keepdims=True)) for key in weights)


def _differing(names: Sequence[str], given: Sequence[str]) -> str:
    """``names`` as by_read says them, or when they are many outputs, the first of FLOW among them
    and a count of the rest: a module wrong in its scores differs in some forty outputs, and each
    case's line named every one, the scores last (red team, round 27)."""
    outputs = list(_reads_by_output(names))
    first = next((output for output in FLOW if output in outputs), None)
    if len(outputs) <= MAX_OUTPUTS_NAMED or first is None:
        return by_read(names, given)
    rest = [output for output in outputs if output != first]
    lead = by_read([name for name in names if _read_and_output(name)[1] == first], given)
    return f"{lead} and in {len(rest)} other outputs ({', '.join(rest[:MAX_OUTPUTS_NAMED // 2])}, ...)"


def by_read(names: Sequence[str], given: Sequence[str]) -> str:
    """``names``, outputs of one numbers case, as a disagreement says them: each output once, with
    the reads it is wrong in, "(every read)" when it is wrong in every read of several that give
    it (``given``: all the case's outputs). A wrong module is mostly wrong in every read, and seven
    reads named one by one made a line of fifty names. Outputs wrong in the same reads share them."""
    giving = _reads_by_output(given)
    groups: dict[str, list[str]] = {}
    for output, reads in _reads_by_output(names).items():
        where = "" if output in OF_NO_READ else f" ({_which_reads(reads, giving.get(output, reads))})"
        groups.setdefault(where, []).append(output)
    return " and ".join(f"{', '.join(outputs)}{where}" for where, outputs in groups.items())


def _reads_by_output(names: Sequence[str]) -> dict[str, list[str]]:
    """Each output of ``names`` with the reads it is named in, in the order met."""
    reads: dict[str, list[str]] = {}
    for name in names:
        read, output = _read_and_output(name)
        reads.setdefault(output, []).append(read)
    return reads


def _read_and_output(name: str) -> tuple[str, str]:
    """The read an output's name belongs to (the longest prefix of READS it starts with) and the rest."""
    read = max((prefix for prefix in READS if name.startswith(prefix)), key=len)
    return read, name.removeprefix(read)


def _which_reads(wrong: list[str], giving: list[str]) -> str:
    right = [read for read in giving if read not in wrong]
    if not right and len(giving) > 1:
        return "every read"
    if not right:  # the one read that gives it, named
        return "read " + _read_names(wrong)
    if len(right) < len(wrong):
        return "every read but " + _read_names(right)
    return ("read " if len(wrong) == 1 else "reads ") + _read_names(wrong)


def _read_names(reads: list[str]) -> str:
    return ", ".join(read or FIRST_READ for read in reads)


def _outcome(attempt: str, returned: str, raised: str) -> str:
    """An attempt's outcome (probe.py _attempt: "returned", or what it raised) as a sentence says it."""
    return returned if attempt == "returned" else f"{raised} {_clip(attempt)}"


def _and_more(lines: list[str], shown: int = 3) -> str:
    return f" and {len(lines) - shown} more" if len(lines) > shown else ""


def _contract_problems(case: str, wrong: list[str], student: dict[str, np.ndarray],
                       reference: dict[str, np.ndarray]) -> list[str]:
    """What differs in the contract case: parameters, query_from, or which calls raise ValueError."""
    problems = []
    for key in wrong:
        name = key.partition(".")[2]
        shown = CONTRACT_WORDS.get(name, name)
        ours, given = reference[key].ravel().tolist(), student.get(key)
        theirs = given.ravel().tolist() if _alike(given, reference[key]) else None
        if name == "validation" and theirs is not None:
            calls = reference[f"{case}.calls"].tolist()
            lines = [f"{call} should {_outcome(should, 'return', 'raise')}, but {_outcome(gave, 'returned', 'raised')}"
                     for call, should, gave in zip(calls, ours, theirs) if should != gave]
            problems.append(f"{len(lines)} of {len(calls)} validation calls differ: " + "; ".join(lines[:3])
                            + _and_more(lines))
        elif theirs is not None:
            lines = [f"{_clip(repr(gave))} (should be {should!r})"
                     for should, gave in zip(ours, theirs) if should != gave]
            problems.append(f"{shown}: " + ", ".join(lines[:3]) + _and_more(lines))
        elif given is not None and given.ndim and reference[key].ndim and given.dtype.kind == "U":
            problems.append(f"{shown}: " + _lines_apart(ours, given.ravel().tolist()))
        else:
            problems.append(f"{shown} should be {_clip(str(reference[key].tolist()))}, got "
                            f"{_clip(str(given.tolist() if given is not None else given))}")
    return problems


def _lines_apart(ours: list[str], theirs: list[str]) -> str:
    """Where the student's lines of a contract output are not the reference's, when their counts
    differ: the lines each lacks, not both lists cut short (whose first 200 characters were alike:
    red team, round 17)."""
    parts = [f"{what} {', '.join(_clip(repr(line)) for line in lines[:3])}{_and_more(lines)}"
             for what, lines in (("extra", [t for t in theirs if t not in ours]),
                                 ("missing", [o for o in ours if o not in theirs])) if lines]
    return "; ".join(parts) or f"{len(theirs)} lines where there should be {len(ours)}"
