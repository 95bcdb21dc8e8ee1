"""Probe executor: run one implementation on given inputs and return what it did, as plain arrays.

Runs inside the sandbox on the student's module, and in the trusted grader on the reference and
the pitfall mutants, so both sides compute exactly the same quantities. Only numpy's npz format
crosses the boundary: np.load with allow_pickle=False here, and the grader's own strict reader
(probes.read_answer) outside. Standard library, numpy and the tinyllm substrate only: the grader
package is not visible inside the sandbox.

The course tests' own verdicts cannot be trusted (they run in the student's process, which can
write any record it likes), so the probes cover everything they check: outputs and gradients in
float64 and float32, through ``forward`` alone and through a cached ``project_keys``, each with
a later decoder step, with a module built from an rng and never loaded trained over inputs
that need no gradient, and read again with the next batch's keys and with a batch of another
size ("numbers" cases), and the module's contract: parameter
names, shapes and default dtype, how the initialisation follows ``rng`` (and the default one
repeats), ``query_from``, which malformed calls raise ValueError, and what its own Module methods
and memory do for a training loop (``as_a_module``) ("contract" case).
"""

from __future__ import annotations

import gc
import io
import json
import re
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

# IMPORTANT: the key layout here is read by grader/probes.py; keep the two in step.
MAX_ERROR_CHARS = 300
ECHOED = ("kind", "score", "dtype")  # payload fields copied into the answer
CACHED = "with_proj:"  # prefix of the outputs read through forward(..., proj=project_keys(keys))
NEXT = "next_"  # prefix of the second read's inputs and outputs
AGAIN = "again_"  # prefix of the outputs of the cached module's third read, the first inputs without proj
SCORED_FROM_PROJ = ("general", "concat")  # the scores whose cache holds a product of W_a (_read_from_given_proj)
FROZEN = "frozen:"  # prefix of the outputs of the reads whose inputs need no gradient
RESIZED = "resized_"  # prefix of the plain module's last read's inputs and outputs, another batch and length
MODEL = "in_a_model:"  # prefix of the outputs of the read through a model that holds the module (_read_in_a_model)
FIRST = "first"  # how a report names the read whose outputs have no prefix
LINEAR_BOUND = "the Linear bound 1/sqrt(in)"  # that of every parameter's draw (_in_linear_bound)
LINEAR_RANGE = "the Linear range (past half its bound on both sides)"  # _spans_linear_range
SPREAD_WIDTH = 64  # the width the spread of the draw is judged at: enough values for a sure test


def run(module, payload: bytes) -> bytes:
    """``payload`` is an npz of cases ``case<i>.<field>``; the answer is an npz of ``case<i>.<output>``."""
    cases = _split_cases(np.load(io.BytesIO(payload), allow_pickle=False))
    answer: dict[str, np.ndarray] = {}
    for index, case in sorted(cases.items()):
        try:
            outputs = _CASE_KINDS[str(case["kind"])](module, case)
        except ReadFailed as failed:
            where = f" (in the {failed.read or FIRST} read{failed.stage})"
            outputs = {"error": np.array(_error_text(failed.error, where))}
        except Exception as exc:  # noqa: BLE001 - the implementation under test may raise anything
            outputs = {"error": np.array(_error_text(exc))}
        echoed = {key: case[key] for key in ECHOED if key in case}  # so the grader can name the case
        answer.update({f"case{index}.{key}": value for key, value in {**outputs, **echoed}.items()})
    buffer = io.BytesIO()
    np.savez(buffer, **answer)
    return buffer.getvalue()


def _error_text(exc: BaseException, where: str = "") -> str:
    return f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS - len(where)] + where


class ReadFailed(Exception):
    """The module raised during one read of a numbers case: which read says what was asked of it,
    and ``stage`` where in the read, when the read's name alone would mislead."""

    def __init__(self, read: str, error: Exception, stage: str = "") -> None:
        super().__init__(read)
        self.read, self.error, self.stage = read, error, stage


def _in_read(read: str, run, *args, **kwargs) -> dict:
    try:
        return run(*args, **kwargs)
    except ReadFailed:
        raise
    except Exception as exc:  # the implementation under test may raise anything
        raise ReadFailed(read, exc) from exc


def _split_cases(archive) -> dict[int, dict[str, np.ndarray]]:
    cases: dict[int, dict[str, np.ndarray]] = {}
    for key in archive.files:
        head, _, field = key.partition(".")
        cases.setdefault(int(head.removeprefix("case")), {})[field] = archive[key]
    return cases


def _numbers(module, case: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One score's forward and backward pass at one dtype, with the grader's weights and inputs:
    once called as the course tests call the module, and once with ``proj=project_keys(keys)`` as
    the decoder does (L4.1 trains through that path, so its gradients are compared too, and the
    projection and the scores read from it), each followed by a later decoder step, a new query
    and mask against the same keys and ``proj``, in the same backward pass; and by a third module
    with inputs that need no gradient. Then each module is read again as a decoder reuses one: other
    weights loaded, the next batch's keys and mask, a second backward pass (gradients add up), and
    a batch of another size and length (the cached one reads that one first); the cached one a
    last time without ``proj``, and the plain one at inference (_read_at_inference): nothing of an
    earlier read may stay."""
    dtype = np.dtype(str(case["dtype"]))
    plain, cached = _loaded(module, case, dtype), _loaded(module, case, dtype, built_from_rng=True)
    # each module's first keys and mask, given again (_read_and_backprop); not a dict keyed by the
    # modules: a correct one may be unhashable (a @dataclass with eq=True)
    held_plain, held_cached = {}, {}
    outputs = {
        **_in_read("", _read_and_backprop, plain, case, dtype, cached=False, held=held_plain),
        **_prefixed(CACHED, _in_read(CACHED, _read_and_backprop, cached, case, dtype, cached=True,
                                     held=held_cached)),
        **_prefixed(FROZEN, _in_read(FROZEN, _read_with_frozen_inputs, module, case, dtype)),
        "scores": plain.scores(_given(case, "query", dtype), _given(case, "keys", dtype)).data,
    }
    for attention in (plain, cached):
        attention.load_state_dict(_weights(case, NEXT + "param:", dtype))
    for read, attention, held, cached_read, step in (
            (NEXT, plain, held_plain, False, NEXT), (RESIZED, plain, held_plain, False, RESIZED),
            (CACHED + RESIZED, cached, held_cached, True, RESIZED), (CACHED + NEXT, cached, held_cached, True, NEXT),
            # without proj, right after project_keys saw the same keys object holding the next keys:
            # no projection may be remembered
            (CACHED + AGAIN, cached, held_cached, False, "")):
        outputs.update(_prefixed(read, _in_read(read, _read_and_backprop, attention, case, dtype,
                                                cached=cached_read, step=step, held=held)))
    read = FROZEN + RESIZED
    outputs.update(_prefixed(read, _in_read(read, _read_at_inference, plain, case, dtype, RESIZED)))
    outputs.update(_prefixed(MODEL, _in_read(MODEL, _read_in_a_model, module, case, dtype)))
    dtypes = np.array([f"{name} {np.asarray(value).dtype if value is not None else None}"
                       for name, value in outputs.items()])
    # in the case's dtype (what each output really was is in dtypes): float32 cases' answers sent as
    # float64 doubled them, and the answer must fit MAX_RETURN_BYTES
    values = {k: np.asarray(v if v is not None else np.nan, dtype=dtype) for k, v in outputs.items()}
    return {**values, "dtypes": dtypes}


def _prefixed(prefix: str, outputs: dict) -> dict:
    return {prefix + name: value for name, value in outputs.items()}


def _given(case: dict[str, np.ndarray], name: str, dtype: np.dtype, requires_grad: bool = False):
    return _tensor(case[name], dtype, requires_grad)


def _tensor(array: np.ndarray, dtype: np.dtype, requires_grad: bool = False):
    from tinyllm.autograd.tensor import Tensor

    return Tensor(array.astype(dtype), requires_grad=requires_grad)


def _loaded(module, case: dict[str, np.ndarray], dtype: np.dtype, built_from_rng: bool = False):
    """A fresh module at ``dtype`` with the grader's weights: each pass starts with no gradients.
    The plain one built as the course tests build it, the cached one from an ``rng`` as a model
    builds it, then loaded as a checkpoint is: both ways meet keys that need a gradient and
    load_state_dict (red team, round 18: a module scaled only when built from an rng and then
    loaded, or trained over keys that need a gradient, passed; the one module built from an rng,
    _seeded's, is never loaded and its keys need none)."""
    from tinyllm.random import PCG32

    rng = PCG32(int(case["seed"]) + 1) if built_from_rng else None
    attention = module.LuongAttention(int(case["d"]), str(case["score"]), rng=rng)
    attention.to(dtype)
    attention.load_state_dict(_weights(case, "param:", dtype))
    return attention


def _seeded(module, case: dict[str, np.ndarray], dtype: np.dtype):
    """A fresh module built from an rng and never loaded, as a model builds and trains it: the
    grader's weights are written into its parameters in place, as an optimiser's step writes
    them, and it is cast only to another dtype than its default. Every other read loads its
    weights, and a module wrong only when built with an rng, or never loaded, agreed (red team,
    round 14). Built, and read in _read_with_frozen_inputs, with every argument named as the
    contract names it, as a caller may: a module that renamed them passed every other read
    (red team, round 17)."""
    from tinyllm.random import PCG32

    attention = module.LuongAttention(d=int(case["d"]), score=str(case["score"]), rng=PCG32(int(case["seed"])))
    if dtype != np.float32:
        attention.to(dtype)
    _write_in_place(attention, _weights(case, "param:", dtype))
    return attention


def _write_in_place(attention, weights: dict[str, np.ndarray]) -> None:
    """``weights`` written into the module's parameters' own arrays, as an optimiser's step writes
    them (load_state_dict may give a parameter a new array instead)."""
    for name, parameter in attention.named_parameters():
        parameter.data[...] = weights[name]


def _weights(case: dict[str, np.ndarray], prefix: str, dtype: np.dtype) -> dict[str, np.ndarray]:
    return {k.removeprefix(prefix): v.astype(dtype) for k, v in case.items() if k.startswith(prefix)}


def _read_and_backprop(attention, case: dict[str, np.ndarray], dtype: np.dtype, cached: bool,
                       step: str = "", held: dict | None = None) -> dict:
    """Context, weights and attentional state of a read and of the decoder's later step, then the
    gradients of a loss that weighs each with the grader's random upstream gradients, so every
    output's gradient reaches every input; and whether the caller's inputs came back as they were
    given. ``step`` picks the inputs: the first read's, or the next one's. ``held`` keeps the keys
    tensor and the mask array of the module's first read, and a later read of their shape is given
    those very objects, refilled in place, as a caller refills one mask buffer for each batch or
    reads one encoder output again: a module that remembered what it made of an object by the
    object (a projection, a mask's real positions) passed (red team, round 19)."""
    query, later_query = (_given(case, step + name, dtype, requires_grad=True) for name in ("query", "later_query"))
    # the other batch's keys time-major in memory, as enc.transpose(0, 1) of a time-major encoder's
    # output is: a module that read the keys' memory in order scrambled them and passed (red team,
    # round 23; round 20 found the same of the mask, below)
    keys = _tensor(_time_major(case[step + "keys"]) if step == RESIZED else case[step + "keys"], dtype,
                   requires_grad=True)
    # the other batch's mask in Fortran order, as (tokens != pad).T of time-major data is: a module
    # that reads a mask's memory in order scrambled it and passed (red team, round 20)
    mask = case[step + "mask"].copy(order="F" if step == RESIZED else "C")
    later_mask = case[step + "later_mask"].copy()
    if held is not None:
        keys, mask = _held(held, keys, mask)
    projected = {}
    if cached:  # the projection and the scores read from it are compared too, not just what forward makes of them
        proj = attention.project_keys(keys)
        # called with proj as the course tests and a decoder call it (a bug in __call__ counts), the next
        # time through forward by keyword
        context, weights = (attention.forward(query, keys, mask, proj=proj) if step
                            else attention(query, keys, mask, proj))
        later = attention(later_query, keys, later_mask, proj)
        scores = attention.scores(query, keys, proj)
        projected = {"proj": proj.data, "scores_from_proj": scores.data,
                     **({} if step or str(case["score"]) not in SCORED_FROM_PROJ
                        else _read_from_given_proj(attention, query, keys, mask, proj, dtype))}
    else:  # called, as the course tests and a decoder call it: a bug in __call__ counts too
        context, weights = attention(query, keys, mask)
        later = attention(later_query, keys, later_mask)
        scores = attention.scores(query, keys)
    attentional = attention.attentional(query, context)
    # and the later step's, before either is trained through, as teacher forcing makes one a step: a
    # module that kept [c ; h] in one buffer of its own trained W_c on the last step's (red team, round 23)
    later_attentional = attention.attentional(later_query, later[0])
    kept = _inputs_kept(case, step, (query.data, "query"), (keys.data, "keys"), (mask, "mask"))
    up_context, up_weights, up_attentional = _upstream(case, step, dtype)  # the later step's weighed as the first's
    # scores() trains too (a loss on them, as a decoder's alignment loss puts one): weighed at the
    # real positions only, so that no gradient reaches padding by this path either (red team,
    # rounds 19 and 20: a scores() that returned a detached tensor, with proj or without, passed)
    _backward((context, up_context), (weights, up_weights), (attentional, up_attentional),
              (later[0], up_context), (later[1], up_weights), (later_attentional, up_attentional),
              (scores, _tensor(up_weights.data * mask, dtype)))
    return {"context": context.data, "weights": weights.data, "attentional": attentional.data, **projected,
            "later_attentional": later_attentional.data,
            "later_context": later[0].data, "later_weights": later[1].data, "grad_later_query": _grad(later_query),
            "grad_query": _grad(query), "grad_keys": _grad(keys), "inputs_kept": np.array(float(kept)),
            **_parameter_grads(attention)}


def _read_from_given_proj(attention, query, keys, mask: np.ndarray, proj, dtype: np.dtype) -> dict:
    """The scores and weights read from a ``proj`` unlike project_keys(keys), its positions in
    reverse order. The cache is what section 2.3 computes once per sentence so that each step
    need not: scores(query, keys, proj) and forward(..., proj) read the one they are given (so
    does the instructor's suite, and the pool's mutants that recompute it from the keys are faults
    a student's tests must catch). A module that recomputed W_a k_s at every step agreed in every
    other read, the cache it was given being always the keys' own (red team, round 28). Not for
    dot, whose cache the chapter defines as the keys themselves: reading the keys is reading it."""
    given = _tensor(np.ascontiguousarray(proj.data[:, ::-1]), dtype)
    _, weights = attention(query, keys, mask, given)
    return {"scores_from_given_proj": attention.scores(query, keys, given).data, "weights_from_given_proj": weights.data}


def _time_major(array: np.ndarray) -> np.ndarray:
    """The same [B, S, d] values, laid out in memory time step first."""
    return np.ascontiguousarray(array.swapaxes(0, 1)).swapaxes(0, 1)


def _inputs_kept(case: dict[str, np.ndarray], step: str, *given: tuple[np.ndarray, str]) -> bool:
    """Every (array, input name) given came back as the ``step`` input it was made from."""
    return all(np.array_equal(array, case[step + name].astype(array.dtype)) for array, name in given)


def _held(held: dict, keys, mask: np.ndarray) -> tuple:
    """The keys and mask to give: those in ``held``, refilled, when of the same shape; else these,
    held from now on if nothing is."""
    if "keys" not in held:
        held.update(keys=keys, mask=mask)
        return keys, mask
    if held["keys"].shape != keys.shape or held["mask"].shape != mask.shape:
        return keys, mask
    held["keys"].data[...] = keys.data
    held["keys"].grad = None
    held["mask"][...] = mask
    return held["keys"], held["mask"]


def _read_with_frozen_inputs(module, case: dict[str, np.ndarray], dtype: np.dtype) -> dict:
    """A fresh module built as a model builds it (``_seeded``), trained over constant keys (a frozen
    encoder's), once with a query that needs a gradient and once with one that does not, as at
    inference: a module that skips the graph when its inputs need none loses its parameters'
    gradients. Then, as training goes on between decodes: an optimiser's step written into the
    parameters in place, and a decode again; and the module cast to float64 and read once more
    (_read_after_training)."""
    attention = _seeded(module, case, dtype)
    keys, frozen_query = _given(case, "keys", dtype), _given(case, "query", dtype)
    query = _given(case, "query", dtype, requires_grad=True)
    context, weights = attention(query=query, keys=keys, mask=case["mask"].copy())
    frozen_context, frozen_weights = attention.forward(query=frozen_query, keys=keys, mask=case["mask"].copy())
    # then keys that differ from those at one real position only, the next sentence of a test set: a
    # module that remembered the projection of keys needing no gradient by their first time step
    # passed (red team, round 23); the position drawn (probes._changed_key), so that no other part is safe
    changed_context, changed_weights = attention(query=frozen_query, keys=_changed_keys(case, dtype),
                                                 mask=case["mask"].copy())
    attentional = attention.attentional(query=frozen_query, context=frozen_context)
    # and through the cache of the constant keys, as a decoder over a frozen encoder trains and as
    # beam search decodes: a module that detached proj there, or took a numpy fast path that forgot
    # the mask once nothing needed a gradient, passed (red team, round 21); project_keys and scores
    # called with their arguments named as the contract names them (round 22: renamed, they passed)
    proj = attention.project_keys(keys=keys)
    given_proj = proj.data.copy()
    cached_context, cached_weights = attention(query=query, keys=keys, mask=case["mask"].copy(), proj=proj)
    decoded_context, decoded_weights = attention(query=frozen_query, keys=keys, mask=case["mask"].copy(), proj=proj)
    # its next step before the first's outputs are read, as a decoder that keeps every step's
    # alignments does: a module that wrote each step's into one workspace kept with proj passed (round 23)
    next_decoded_context, next_decoded_weights = attention(query=_given(case, "later_query", dtype), keys=keys,
                                                           mask=case["later_mask"].copy(), proj=proj)
    # the decoder's next step reads the same proj: a fast path that wrote its sum into proj's array
    # passed (red team, round 22)
    proj_kept = np.array_equal(proj.data, given_proj)
    scores = attention.scores(query=query, keys=keys)
    up_context, up_weights, up_attentional = _upstream(case, "", dtype)
    _backward((context, up_context), (weights, up_weights), (frozen_context, up_context),
              (frozen_weights, up_weights), (attentional, up_attentional), (cached_context, up_context),
              (cached_weights, up_weights))
    # and a second backward pass through the same proj, as a decoder that backpropagates each step's
    # loss, or an alignment loss apart, makes: a module that cut proj's graph after its first pass
    # passed (red team, round 23); the gradients add up
    step_context, step_weights = attention(query=query, keys=keys, mask=case["later_mask"].copy(), proj=proj)
    _backward((step_context, up_context), (step_weights, up_weights))
    return {"context": context.data, "weights": weights.data, "inference_context": frozen_context.data,
            "inference_weights": frozen_weights.data, "attentional": attentional.data, "grad_query": _grad(query),
            "changed_context": changed_context.data, "changed_weights": changed_weights.data,
            "cached_context": cached_context.data, "cached_weights": cached_weights.data,
            "decoded_context": decoded_context.data, "decoded_weights": decoded_weights.data,
            "next_decoded_context": next_decoded_context.data, "next_decoded_weights": next_decoded_weights.data,
            "step_context": step_context.data, "step_weights": step_weights.data,
            "scores": scores.data, "proj_kept": np.array(float(proj_kept)), **_parameter_grads(attention),
            **_read_after_training(attention, case, dtype)}


def _read_in_a_model(module, case: dict[str, np.ndarray], dtype: np.dtype) -> dict:
    """The module as a seq2seq model holds it: a child of a Module of the model's, whose own layer
    (``bridge``, then tanh) makes the query and the keys from the case's, as a recurrent decoder's
    and encoder's states are made: outputs of operations, every value within (-1, 1). The model is
    cast and loaded as a whole, first in the other dtype and read there (a model checked in one
    dtype and trained in the other; that read is not compared, as float32's rounding would be
    judged at float64's tolerance), and its parameters' gradients are read from the list it gave
    before any call, as an optimiser built before training holds them: Module's ``to``,
    ``load_state_dict`` and ``named_parameters`` walk the children's registered parameters and
    call none of their methods. The decoder's next step takes a query made from this step's
    attentional state (input feeding), and the model then decodes as an evaluation does
    (_decoded). Modules that registered their layers under other names and renamed them in their
    own named_parameters, kept them in a plain dict, refreshed views of their weights only in
    their own load_state_dict and to, read keys that were an operation's output as values
    detached, or scaled the dot score whenever every input lay within (-1, 1), passed every other
    read (red team, round 24); so did modules that swapped their parameters for new objects on
    their first call, detached a query made from their own attentional state, or kept the widest
    dtype they had computed in after a cast down (round 25)."""
    model = _model(module, int(case["d"]), str(case["score"]), int(case["seed"]))
    held = model.named_parameters()
    other = np.dtype(np.float64 if dtype == np.float32 else np.float32)
    # a float64 case failing with float32's error said only "in the in_a_model: read" (red team, round 27)
    stage = f", with the model holding the module cast to {other} and read there"
    try:
        _cast_and_load(model, case, other)
        _decoded(model.attention, case, other, ("bucket",))
        stage = f", which had cast the model holding the module to {other} and back to {np.dtype(dtype)}"
        _cast_and_load(model, case, dtype)
        return _read_by_the_model(model, held, case, dtype)
    except Exception as exc:  # the implementation under test may raise anything
        raise ReadFailed(MODEL, exc, stage) from exc


def _read_by_the_model(model, held: list, case: dict[str, np.ndarray], dtype: np.dtype) -> dict:
    """A step of a decoder the model holds, then its decoding (_read_in_a_model)."""
    from tinyllm.autograd import functional as F

    # the next read's inputs: the first read's rows that score far from zero would fill tanh to 1
    inputs = _given(case, NEXT + "query", dtype, requires_grad=True), _given(case, NEXT + "keys", dtype, True)
    query, keys = (F.tanh(model.bridge(given)) for given in inputs)
    mask = case[NEXT + "mask"].copy()
    context, weights = model.attention(query, keys, mask)
    attentional = model.attention.attentional(query, context)
    proj = model.attention.project_keys(keys)
    cached_context, cached_weights = model.attention(query, keys, mask, proj)
    fed_query = F.tanh(model.bridge(attentional))  # input feeding: the next step reads this step's state
    fed_context, fed_weights = model.attention(fed_query, keys, mask, proj)
    up_context, up_weights, up_attentional = _upstream(case, NEXT, dtype)
    _backward((context, up_context), (weights, up_weights), (attentional, up_attentional),
              (cached_context, up_context), (cached_weights, up_weights),
              (fed_context, up_context), (fed_weights, up_weights))
    return {"context": context.data, "weights": weights.data, "attentional": attentional.data,
            "cached_context": cached_context.data, "cached_weights": cached_weights.data,
            "fed_context": fed_context.data, "fed_weights": fed_weights.data,
            "grad_query": _grad(inputs[0]), "grad_keys": _grad(inputs[1]),
            **{f"grad:{name}": _grad(parameter) for name, parameter in held},
            **_decoded(model.attention, case, dtype, DECODED)}


def _cast_and_load(model, case: dict[str, np.ndarray], dtype: np.dtype) -> None:
    """``model`` cast to ``dtype`` and given the grader's weights, both by the model's Module."""
    model.to(dtype)
    bridge = {f"bridge.{name}": value for name, value in model.bridge.state_dict().items()}
    model.load_state_dict({**bridge, **{f"attention.{name}": value
                                        for name, value in _weights(case, "param:", dtype).items()}})


DECODED = ("bucket", "sentence", "beam")


def _decoded(attention, case: dict[str, np.ndarray], dtype: np.dtype, reads: tuple[str, ...]) -> dict:
    """Reads as an evaluation decodes, nothing needing a gradient, each through ``proj``, on the
    next read's keys taken as real tokens throughout: a batch with no padding (length-bucketed),
    one sentence alone, and one sentence's keys repeated for a beam of queries. The probes' every
    other read had padding, more than one row and rows of other keys, and modules that took a
    shortcut there (the context read from ``proj``; one row read for the whole beam) passed (red
    team, round 25)."""
    keys, query = case[NEXT + "keys"], case[NEXT + "query"]
    batches = {"bucket": (query, keys), "sentence": (query[:1], keys[:1]),
               "beam": (query, np.repeat(keys[:1], len(query), axis=0))}
    outputs = {}
    for read in reads:
        given_query, given_keys = (_tensor(array, dtype) for array in batches[read])
        context, weights = attention(given_query, given_keys, np.ones(given_keys.shape[:2], dtype=bool),
                                     attention.project_keys(given_keys))
        outputs.update({f"{read}_context": context.data, f"{read}_weights": weights.data})
    return outputs


def _model(module, d: int, score: str, seed: int) -> Any:
    """A Module of the substrate's holding a Linear and the graded module's LuongAttention."""
    from tinyllm.nn.linear import Linear
    from tinyllm.nn.module import Module
    from tinyllm.random import PCG32

    class Model(Module):
        def __init__(self) -> None:
            super().__init__()
            self.bridge = Linear(d, d, rng=PCG32(seed + 2))
            self.attention = module.LuongAttention(d, score, rng=PCG32(seed + 3))

    return Model()


def _changed_keys(case: dict[str, np.ndarray], dtype: np.dtype):
    """The first read's keys with the key at ``changed_at`` (row, time step) replaced."""
    keys = case["keys"].copy()
    keys[tuple(case["changed_at"])] = case["changed_key"]
    return _tensor(keys, dtype)


def _read_after_training(attention, case: dict[str, np.ndarray], dtype: np.dtype) -> dict:
    """``attention``, used, given the next weights in place as an optimiser's step writes them, then
    decoding with a new projection; then cast to float64 (``to``) and read. Modules that kept W_h's
    transpose for decoding until its array object changed, or built a constant in the first call's
    dtype and kept it, passed every other read (red team, round 22)."""
    _write_in_place(attention, _weights(case, NEXT + "param:", dtype))
    keys = _given(case, "keys", dtype)
    context, weights = attention(_given(case, "query", dtype), keys, case["mask"].copy(), attention.project_keys(keys))
    stepped = {"stepped_context": context.data, "stepped_weights": weights.data}
    # to float64 whatever the case's dtype, though a float64 module's cast changes nothing: a float64
    # case's module cast to float32 instead would be compared at float64's tolerance
    wider = np.dtype(np.float64)
    attention.to(wider)
    context, weights = attention(_given(case, "query", wider), _given(case, "keys", wider), case["mask"].copy())
    return {**stepped, "cast_context": context.data, "cast_weights": weights.data}


def _read_at_inference(attention, case: dict[str, np.ndarray], dtype: np.dtype, step: str) -> dict:
    """The ``step`` inputs read as an encoder trains through a read whose query is a constant (the
    keys need a gradient, the query none), directly and through ``project_keys``, then as a model
    decodes, nothing needing one. With the resized batch: one row, as greedy decoding reads, or a
    training batch. Every other read whose inputs need no gradient had the first read's batch, and
    modules wrong only at inference for one row, or that gave the keys no gradient when the query
    needed none, passed (red team, round 19)."""
    keys, query = _given(case, step + "keys", dtype, requires_grad=True), _given(case, step + "query", dtype)
    mask = case[step + "mask"].copy()
    context, weights = attention(query, keys, mask)
    attentional = attention.attentional(query, context)
    # and through the keys' projection, as a decoder trains its encoder with teacher forcing's
    # constant queries: a fast path taken whenever the query needed no gradient, with no graph,
    # passed (red team, round 22)
    cached_context, cached_weights = attention(query, keys, mask, attention.project_keys(keys))
    up_context, up_weights, up_attentional = _upstream(case, step, dtype)
    _backward((context, up_context), (weights, up_weights), (attentional, up_attentional),
              (cached_context, up_context), (cached_weights, up_weights))
    frozen_query, frozen_keys, frozen_mask = (_given(case, step + "query", dtype), _given(case, step + "keys", dtype),
                                              case[step + "mask"].copy())
    inference_context, inference_weights = attention(frozen_query, frozen_keys, frozen_mask)
    kept = _inputs_kept(case, step, (query.data, "query"), (keys.data, "keys"), (mask, "mask"),
                        (frozen_query.data, "query"), (frozen_keys.data, "keys"), (frozen_mask, "mask"))
    return {"context": context.data, "weights": weights.data, "attentional": attentional.data,
            "cached_context": cached_context.data, "cached_weights": cached_weights.data,
            "grad_keys": _grad(keys), "inference_context": inference_context.data,
            "inference_weights": inference_weights.data, "inputs_kept": np.array(float(kept)),
            **_parameter_grads(attention)}


def _upstream(case: dict[str, np.ndarray], step: str, dtype: np.dtype) -> list:
    """The grader's random upstream gradients of a read's context, weights and attentional state."""
    return [_given(case, step + name, dtype) for name in ("up_context", "up_weights", "up_attentional")]


def _backward(*weighed: tuple) -> None:
    """Backpropagate the sum of each (output, upstream gradient) pair's elementwise product, so
    that every output's gradient reaches every input."""
    terms = [(output * upstream).sum() for output, upstream in weighed]
    sum(terms[1:], terms[0]).backward()


def _grad(tensor) -> np.ndarray:
    """A tensor's gradient, zeros when none reached it (what torch leaves as None too: a one-token
    source's weights need not depend on the query)."""
    return tensor.grad if tensor.grad is not None else np.zeros_like(tensor.data)


def _parameter_grads(attention) -> dict[str, np.ndarray]:
    return {f"grad:{name}": _grad(parameter) for name, parameter in attention.named_parameters()}


def _contract(module, case: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the module promises besides numbers, as text the grader compares line by line."""
    d = int(case["d"])
    parameters, initialisation, as_a_module = [], [], []
    query_from = [f"class {_text(getattr(module.LuongAttention, 'query_from', None))}"]
    for score in (str(s) for s in case["scores"]):
        attention = module.LuongAttention(d, score)
        parameters += [f"{score}: {name} {tuple(p.shape)} {p.dtype}" for name, p in attention.named_parameters()]
        parameters.append(f"{score}: state_dict {list(attention.state_dict())}")
        parameters += _checkpoints(attention, score)
        as_a_module += _as_a_module(module, d, score, int(case["seeds"][0]))
        query_from.append(f"{score} {_text(getattr(attention, 'query_from', None))}")
        initialisation += _initialisation(module, d, score, [int(seed) for seed in case["seeds"]])
    calls = [json.loads(str(call)) for call in case["calls"]]
    return {"parameters": np.array(parameters), "query_from": np.array(query_from),
            "initialisation": np.array(initialisation), "as_a_module": np.array(as_a_module),
            "validation": np.array([_attempt(module, call) for call in calls]),
            "calls": np.array([_describe_call(call) for call in calls])}


def _checkpoints(attention, score: str) -> list[str]:
    """As the substrate's Module: state_dict gives copies (later training does not change a saved
    checkpoint), and load_state_dict refuses a checkpoint with a parameter missing or one too many.
    Modules that handed out their live arrays, or loaded anything (a dot checkpoint left a general
    module's W_a as drawn), passed every read (red team, round 23)."""
    saved = attention.state_dict()
    own = [parameter.data for _, parameter in attention.named_parameters()]
    shared = any(np.shares_memory(value, array) for value in saved.values() for array in own)
    lines = [f"{score}: state_dict {'shares arrays with the parameters' if shared else 'holds copies'}"]
    first = min(saved, default=None)  # the names and their order are compared on a line of their own
    if first is None:
        return lines
    short, over = _one_short_and_one_over(saved, first)
    for what, checkpoint in (("without " + first, short), ("with a parameter it does not have", over)):
        lines.append(f"{score}: a checkpoint {what} {_load_outcome(attention, checkpoint)}")
    return lines


def _one_short_and_one_over(saved: dict, name: str) -> tuple[dict, dict]:
    """``saved`` without parameter ``name``, and with an extra one it names no parameter of."""
    return {k: v for k, v in saved.items() if k != name}, {**saved, "extra.weight": saved[name]}


def _load_outcome(attention, checkpoint: dict) -> str:
    """Whether ``checkpoint`` loads, or the class of what it raised (not its message, whose
    wording is the module's own)."""
    try:
        attention.load_state_dict(checkpoint)
    except Exception as exc:  # noqa: BLE001 - the implementation under test may raise anything
        return f"raises {type(exc).__name__}"
    return "loads"


def _as_a_module(module, d: int, score: str, seed: int) -> list[str]:
    """What a training loop, a checkpoint and a model ask of the module's own Module methods and
    memory, each as a fact of the module's own behaviour, one line per question, so that no line
    holds a number and the report names the question that differs. A student may override any of
    these methods (to re-slice concat's weight, say), and overrides that kept a stale snapshot in
    state_dict, trained the caller's checkpoint arrays in place after load_state_dict, gave new
    parameter objects in to(), made parameters() a generator, forgot a parameter in zero_grad,
    reshaped a checkpoint of the wrong shape or returned no LoadResult; modules that read the
    query's or the weights' memory in order, or kept every step's graph "for plotting", passed
    every other read (red team, round 26). Each question is asked of the same float64 module, in
    this order, and one that raises is answered by what it raised."""
    from tinyllm.random import PCG32

    attention = module.LuongAttention(d, score, rng=PCG32(seed))
    attention.to(np.float64)
    inputs = _module_inputs(d, seed)
    lines = []
    for question, check in _MODULE_QUESTIONS.items():
        try:
            answer = check(attention, inputs)
        except Exception as exc:  # noqa: BLE001 - the implementation under test may raise anything
            answer = f"raises {_error_text(exc)}"
        lines.append(f"{score}: {question}: {answer}")
    return lines


def _module_inputs(d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A query, keys and a mask (a full row, a padded one, one token) in float64."""
    draw = np.random.default_rng(seed)
    mask = np.arange(4) < np.array([4, 2, 1])[:, None]
    return draw.standard_normal((3, d)), draw.standard_normal((3, 4, d)), mask


def _module_read(attention, inputs: tuple, query: np.ndarray | None = None) -> list:
    """Context, weights and attentional state of one read, the query needing a gradient."""
    given_query = _tensor(inputs[0] if query is None else query, np.float64, requires_grad=True)
    context, weights = attention(given_query, _tensor(inputs[1], np.float64, requires_grad=True), inputs[2].copy())
    return [context, weights, attention.attentional(given_query, context)]


def _alike(first: list, second: list) -> bool:
    return all(np.allclose(a.data, b.data, rtol=1e-9, atol=1e-12) for a, b in zip(first, second, strict=True))


def _same_objects(these: list, those: list) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those))


def _named(attention) -> list:
    return [parameter for _, parameter in attention.named_parameters()]


def _parameters_listed(attention, inputs: tuple) -> str:
    given = attention.parameters()
    first, again = list(given), list(given)
    if not _same_objects(first, _named(attention)):
        return "not the parameters named_parameters() gives"
    return "the named parameters" + ("" if len(again) == len(first) else ", and nothing when read a second time "
                                     "(an optimiser that keeps them trains nothing after its first step)")


def _query_in_column_order(attention, inputs: tuple) -> str:
    alike = _alike(_module_read(attention, inputs), _module_read(attention, inputs, np.asfortranarray(inputs[0])))
    return "reads it alike" if alike else "reads it otherwise (a query laid out column by column, [d, B] transposed)"


def _weights_in_column_order(attention, inputs: tuple) -> str:
    saved = attention.state_dict()
    attention.load_state_dict({name: np.ascontiguousarray(value) for name, value in saved.items()})
    in_rows = _module_read(attention, inputs)
    attention.load_state_dict({name: np.asfortranarray(value) for name, value in saved.items()})
    alike = _alike(in_rows, _module_read(attention, inputs))
    return "reads them alike" if alike else "reads them otherwise (weights loaded from a transposed [in, out] kernel)"


def _outputs_let_go(attention, inputs: tuple) -> str:
    first = _module_read(attention, inputs)
    _backward(*((output, 1.0) for output in first))
    held = [weakref.ref(output) for output in first]
    del first
    for _ in range(2):
        _module_read(attention, inputs)
    gc.collect()
    return "freed" if all(ref() is None for ref in held) else "still held by the module (memory grows every step)"


def _zero_grad_clears(attention, inputs: tuple) -> str:
    for _, parameter in attention.named_parameters():
        parameter.grad = np.ones_like(parameter.data)
    attention.zero_grad()
    left = [name for name, parameter in attention.named_parameters()
            if parameter.grad is not None and np.any(parameter.grad)]
    return f"leaves the gradient of {', '.join(left)}" if left else "clears every gradient"


def _state_dict_after_a_step(attention, inputs: tuple) -> str:
    attention.state_dict()  # a checkpoint saved before the step, as every evaluation saves one
    for _, parameter in attention.named_parameters():
        parameter.data[...] = parameter.data * 0.5 + 0.25  # an optimiser's step, in place
    saved = attention.state_dict()
    current = all(name in saved and np.array_equal(saved[name], parameter.data)
                  for name, parameter in attention.named_parameters())
    return "the new values" if current else "values from before the step"


def _checkpoint_loaded(attention, inputs: tuple) -> str:
    checkpoint = {name: -value for name, value in attention.state_dict().items()}
    kept = {name: value.copy() for name, value in checkpoint.items()}
    attention.load_state_dict(checkpoint)
    loaded = all(np.array_equal(parameter.data, kept.get(name)) for name, parameter in attention.named_parameters())
    for _, parameter in attention.named_parameters():
        parameter.data[...] += 1.0  # an optimiser's step, in place
    untouched = all(np.array_equal(checkpoint[name], value) for name, value in kept.items())
    after = "left as it was" if untouched else "changed by training the module (it kept the caller's arrays)"
    return f"{'its values loaded' if loaded else 'not its values'}, and {after}"


def _transposed_checkpoint(attention, inputs: tuple) -> str:
    saved = attention.state_dict()
    name = next(name for name, value in saved.items() if value.ndim == 2 and value.shape[0] != value.shape[1])
    return f"{name} transposed: {_load_outcome(attention, {**saved, name: saved[name].T.copy()})}"


def _loaded_leniently(attention, inputs: tuple) -> str:
    saved = attention.state_dict()
    first = next(iter(saved))
    results = [attention.load_state_dict(checkpoint, strict=False)
               for checkpoint in _one_short_and_one_over(saved, first)]
    return "; ".join(f"missing {list(result.missing_keys)}, unexpected {list(result.unexpected_keys)}"
                     for result in results)


def _cast_in_place(attention, inputs: tuple) -> str:
    before = _named(attention)
    attention.to(np.float32)
    return "keeps its parameter objects" if _same_objects(before, _named(attention)) else \
        "makes new parameter objects (a list taken before, as an optimiser holds one, trains no more)"


_MODULE_QUESTIONS: dict[str, Callable[[Any, tuple], str]] = {
    "parameters()": _parameters_listed,
    "a query in column order": _query_in_column_order,
    "weights in column order": _weights_in_column_order,
    "a read's outputs, two reads later": _outputs_let_go,
    "zero_grad()": _zero_grad_clears,
    "state_dict() after an in-place step": _state_dict_after_a_step,
    "a checkpoint load_state_dict() loaded, after an in-place step": _checkpoint_loaded,
    "a checkpoint of the wrong shape": _transposed_checkpoint,
    "load_state_dict(strict=False) without the first parameter; with one more": _loaded_leniently,
    "to(np.float32)": _cast_in_place,
}


def _initialisation(module, d: int, score: str, seeds: list[int]) -> list[str]:
    """How the initialisation follows ``rng`` (PCG32, M06.3): the module draws from the rng it is
    given (so the caller's next layer starts elsewhere); and per parameter, the first seed twice
    gives the same values, the second seed other values, and no other parameter's (one stream
    draws them all, as Linear's docstring asks: "pass one shared rng to get different layers");
    the default (no ``rng``) gives the same values each time; no array is shared with another
    parameter or another module; nothing starts at zero, anything but finite, or beyond Linear's
    bound, and the draw spans Linear's range (at SPREAD_WIDTH). Not the values themselves: a
    correct module may draw its layers in another order. Nor whether two default layers differ:
    passing ``rng=None`` on to each Linear, the natural way to write it, starts two of one shape
    alike, and neither the chapter nor the contract asks otherwise."""
    from tinyllm.random import PCG32

    given = PCG32(seeds[0])
    first = dict(module.LuongAttention(d, score, rng=given).named_parameters())
    again, other = (dict(module.LuongAttention(d, score, rng=PCG32(seed)).named_parameters())
                    for seed in (seeds[0], seeds[1]))
    default, default_again = (dict(module.LuongAttention(d, score).named_parameters()) for _ in range(2))
    wide = dict(module.LuongAttention(SPREAD_WIDTH, score, rng=PCG32(seeds[0])).named_parameters())
    drawn = given.next_u32() != PCG32(seeds[0]).next_u32()
    lines = [f"{score}: {'draws from' if drawn else 'does not draw from'} the rng it is given"]
    for name, parameter in first.items():  # one line per fact, so that a report names the one that differs
        lines += [f"{score}: {name} {fact}" for fact in (
            f"{'repeats' if _equal(first, again, name) else 'does not repeat'} with its seed",
            f"{'does not change' if _equal(first, other, name) else 'changes'} with another seed",
            f"{'equals another parameter' if _equals_another(first, name) else 'is its own'} with one rng",
            f"{'repeats' if _equal(default, default_again, name) else 'does not repeat'} with no rng",
            "shares an array" if _shares_an_array(name, first, default, default_again) else "has arrays of its own",
            f"{'varies' if all(_varies(p, name) for p in (first, default)) else 'holds one value throughout'}",
            f"{'is not all zeros' if np.any(parameter.data) else 'is all zeros'}",
            f"{'is finite' if all(_finite(p, name) for p in (first, default)) else 'is not finite'}",
            f"{'is' if all(_in_linear_bound(p, name) for p in (first, default)) else 'is not'} within {LINEAR_BOUND}",
            f"{'spans' if _spans_linear_range(wide, name) else 'does not span'} {LINEAR_RANGE} at width {SPREAD_WIDTH}")]
    return lines


def _equals_another(parameters: dict, name: str) -> bool:
    return any(np.array_equal(parameters[name].data, other.data) for key, other in parameters.items() if key != name)


def _shares_an_array(name: str, *modules: dict) -> bool:
    """Whether parameter ``name`` of any of ``modules`` shares memory with another parameter of
    any of them (tied weights, or arrays kept at module level and handed to every instance)."""
    mine = [module[name].data for module in modules if name in module]
    theirs = [(index, key, p.data) for index, module in enumerate(modules) for key, p in module.items()]
    return any(np.shares_memory(array, other) for own_index, array in enumerate(mine)
               for index, key, other in theirs if (index, key) != (own_index, name))


def _text(value: object) -> str:
    """A value as the contract compares it: a str by its text, whatever its class says it is
    (a StrEnum member, or a ``(str, Enum)`` one, whose str() is its name on Python 3.11)."""
    return repr(str.__str__(value)) if isinstance(value, str) else repr(value)


def _varies(parameters: dict, name: str) -> bool:
    """More than one value in the parameter, and rows that differ where it has more than one: one
    drawn number filled in everywhere, or one drawn row repeated, starts every unit alike, and no
    gradient can tell them apart (red team, rounds 19 and 20: each passed every other fact)."""
    if name not in parameters:
        return False
    data = np.atleast_2d(parameters[name].data)
    return np.unique(data).size > 1 and (len(data) < 2 or np.unique(data, axis=0).shape[0] > 1)


def _in_linear_bound(parameters: dict, name: str) -> bool:
    """Linear (L0.4) holds W_a, v and W_c, and draws a weight [out, in] from uniform(-1/sqrt(in),
    1/sqrt(in)); the float32 rounding of a draw may pass the bound by a unit in its last place.
    Weights drawn from N(0, 1), or with the bound sqrt(in), passed every other fact (red team,
    round 21)."""
    if name not in parameters:
        return False
    data = np.atleast_2d(parameters[name].data)
    return bool(np.all(np.abs(data) <= (1 + 1e-6) / np.sqrt(data.shape[-1])))


def _spans_linear_range(parameters: dict, name: str) -> bool:
    """Some of the parameter's values beyond half of Linear's bound on either side, as a uniform
    draw over the whole range has (at SPREAD_WIDTH, even v's 64 values miss one side with
    probability (3/4)^64, about 1e-8). Weights drawn from [0, bound), or within 1/in instead of
    1/sqrt(in), passed every other fact (red team, round 22)."""
    if name not in parameters:
        return False
    data = np.atleast_2d(parameters[name].data)
    half = 0.5 / np.sqrt(data.shape[-1])
    return bool(data.max() > half and data.min() < -half)


def _finite(parameters: dict, name: str) -> bool:
    return name in parameters and bool(np.all(np.isfinite(parameters[name].data)))


def _equal(parameters: dict, others: dict, name: str) -> bool:
    return name in others and np.array_equal(parameters[name].data, others[name].data)


def _attempt(module, call: dict) -> str:
    """Make one call of the contract; say whether it raised ValueError (and named the keyword the
    course tests look for in the message), raised something else, or returned."""
    from tinyllm.autograd.tensor import Tensor
    from tinyllm.random import PCG32

    try:
        attention = module.LuongAttention(call["d"], call["score"], *([PCG32(1)] if call.get("rng") else []))
        if call["call"] != "construct":
            attention.to(np.float64)
            query, keys = Tensor(np.ones(call["query"])), Tensor(np.ones(call["keys"]))
            cache = {"proj": attention.project_keys(keys)} if call.get("proj") else {}
            if call["call"] == "scores":
                attention.scores(query, keys, **cache)
            else:
                attention(query, keys, np.ones(call["mask"], dtype=call["mask_dtype"]), **cache)
    except ValueError as exc:
        keyword = call["keyword"]
        if not keyword:
            return "ValueError"
        if re.search(keyword, str(exc), re.IGNORECASE):
            return f"ValueError naming the {keyword}"
        # the message, so that the report shows what it said instead (red team, round 17)
        return _error_text(exc, f" (the word {keyword!r} is not in it)")
    except Exception as exc:  # noqa: BLE001 - the implementation under test may raise anything
        return _error_text(exc)
    return "returned"


def _describe_call(call: dict) -> str:
    """The call as the report shows it."""
    made = f"LuongAttention({call['d']}, {call['score']!r}{', PCG32(1)' if call.get('rng') else ''})"
    if call["call"] == "construct":
        return made
    shapes = f"query {tuple(call['query'])}, keys {tuple(call['keys'])}"
    cache = ", proj=project_keys(keys)" if call.get("proj") else ""
    if call["call"] == "scores":
        return f"{made}.scores({shapes}{cache})"
    return f"{made}({shapes}, mask {tuple(call['mask'])} {call['mask_dtype']}{cache})"


_CASE_KINDS = {"numbers": _numbers, "contract": _contract}
