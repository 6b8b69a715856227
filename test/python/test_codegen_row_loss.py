"""The row-loss schedule (fused_softmax_cross_entropy one row per loop
iteration, each row's log-sum-exp in vectors, the target's logit read once,
fuel-codegen-cpu) against the numpy reference (references.cross_entropy,
float64) in docs/FusedOps.md's tolerances: mean, sum and none, ignored
targets (default and custom ignore_index; all ignored gives NaN for the
mean), logits of rank 1, 2 and 3, large logits, f32/f16/bf16; and the class
counts it leaves to the decomposition."""

import numpy as np
import pytest

from fuel_mlir import runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand


def run(logits, targets, **params):
    text = fused_text("fused_softmax_cross_entropy", [logits, targets], params)
    return runner.compile(text, "f")(logits, targets)


def targets_for(shape, classes, seed=0, ignore=-100, every=5):
    t = np.random.default_rng(seed).integers(0, classes, shape).astype(np.int64)
    flat = t.reshape(-1)
    flat[::every] = ignore
    return t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
# Class counts that are not a multiple of 16 end with a masked vector.
@pytest.mark.parametrize("shape", [(6, 32), (2, 3, 64), (64,), (128, 1024),
                                   (6, 17), (3, 1001), (2, 3, 50)],
                         ids=lambda s: "x".join(map(str, s)))
def test_scheduled(reduction, shape):
    logits = rand(shape, np.float32, 1, scale=3.0)
    t = targets_for(shape[:-1], shape[-1])
    got = run(logits, t, reduction=reduction)
    want = ref.cross_entropy(logits.astype(np.float64), t, reduction)
    assert np.shape(got) == np.shape(want)
    assert_close(got, want, "f32", loose=True)


# Any number of rows: leading dims dynamic, one compiled function for every
# batch; per-row losses ("none") of one dim of targets.
@pytest.mark.parametrize("reduction,shape,dynamic", [("mean", (2, 3, 40), (0, 1)),
                                                     ("sum", (5, 33), (0,)),
                                                     ("none", (6, 48), (0,))],
                         ids=lambda v: str(v))
def test_dynamic_rows(reduction, shape, dynamic):
    logits = rand(shape, np.float32, 7, scale=3.0)
    t = targets_for(shape[:-1], shape[-1])
    text = fused_text("fused_softmax_cross_entropy", [logits, t], {"reduction": reduction},
                      dynamic={0: dynamic, 1: dynamic})
    f = runner.compile(text, "f")
    for lead in [shape[:-1], tuple(d + 2 for d in shape[:-1])]:
        x = rand(lead + shape[-1:], np.float32, sum(lead), scale=3.0)
        y = targets_for(lead, shape[-1], seed=len(lead))
        got = f(x, y)
        want = ref.cross_entropy(x.astype(np.float64), y, reduction)
        assert np.shape(got) == np.shape(want)
        assert_close(got, want, "f32", loose=True)


def test_custom_ignore_index_and_all_ignored():
    logits = rand((8, 48), np.float32, 2)
    t = targets_for((8,), 48, ignore=7, every=2)
    assert_close(run(logits, t, ignore_index=7),
                 ref.cross_entropy(logits.astype(np.float64), t, "mean", 7), "f32", loose=True)
    none = np.full((8,), -100, np.int64)
    assert np.isnan(run(logits, none))
    assert np.all(run(logits, none, reduction="none") == 0)


def test_large_logits():
    # exp(x) overflows f32 without the row max.
    logits = rand((16, 64), np.float32, 3, scale=300.0)
    t = targets_for((16,), 64, every=100)
    assert_close(run(logits, t, reduction="none"),
                 ref.cross_entropy(logits.astype(np.float64), t, "none"), "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
@pytest.mark.parametrize("classes", [64, 70])
def test_low_precision(dname, dtype, classes):
    logits = rand((32, classes), dtype, 4)
    t = targets_for((32,), classes)
    got = run(logits, t, reduction="none")
    assert got.dtype == np.float32
    assert_close(got, ref.cross_entropy(logits.astype(np.float64), t, "none"), dname)


def test_left_to_the_decomposition():
    logits = rand((5, 10), np.float32, 5)
    t = targets_for((5,), 10)
    assert_close(run(logits, t), ref.cross_entropy(logits.astype(np.float64), t), "f32", loose=True)
