"""The vector `exp` that `fuel-approximate-math` computes (the row ops' and
attention's exponentials), in ulps against numpy's float64 `exp` rounded to
f32, over its whole f32 range and at its edges; and against libm's scalar
`exp` (the same function with `approximate_math=False`)."""

import numpy as np
import pytest

from fuel_mlir import runner

WIDTH = 16


def exp_module(n, approximate=True):
    # exp over a tensor of n elements in vectors of WIDTH lanes: the same
    # `math.exp` on vector<16xf32> that the schedules emit.
    t = f"tensor<{n}xf32>"
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %c0 = arith.constant 0 : index
  %step = arith.constant {WIDTH} : index
  %n = arith.constant {n} : index
  %pad = arith.constant 0.0 : f32
  %init = tensor.empty() : {t}
  %r = scf.for %i = %c0 to %n step %step iter_args(%acc = %init) -> ({t}) {{
    %v = vector.transfer_read %x[%i], %pad {{in_bounds = [true]}} : {t}, vector<{WIDTH}xf32>
    %e = math.exp %v : vector<{WIDTH}xf32>
    %w = vector.transfer_write %e, %acc[%i] {{in_bounds = [true]}} : vector<{WIDTH}xf32>, {t}
    scf.yield %w : {t}
  }}
  return %r : {t}
}}
"""


def vector_exp(x, **options):
    x = np.ascontiguousarray(x, np.float32)
    pad = (-len(x)) % WIDTH
    padded = np.concatenate([x, np.zeros(pad, np.float32)])
    return runner.compile(exp_module(len(padded)), "f", **options)(padded)[:len(x)]


def ulps(got, x):
    want = np.exp(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - want) / np.spacing(want.astype(np.float32)).astype(np.float64)


# Where exp(x) is a normal f32: ln(2^-126) < x < ln(FLT_MAX).
LOWEST_NORMAL = float(np.log(np.float64(np.finfo(np.float32).tiny)))
HIGHEST = float(np.log(np.float64(np.finfo(np.float32).max)))


def test_exp_ulps_over_the_normal_range():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        np.linspace(-87.3, 88.72, 200_003, dtype=np.float32),
        rng.uniform(-87.3, 88.72, 100_000).astype(np.float32),
        rng.uniform(-1.0, 1.0, 50_000).astype(np.float32),
        np.float32([0.0, -0.0, 1e-30, -1e-30, 1e-7, 0.34657359, -0.34657359,
                    0.6931472, 1.0, -1.0, 88.0, 88.5, 88.72, -87.0])])
    x = x[(x > LOWEST_NORMAL) & (x < HIGHEST)]
    got = vector_exp(x)
    err = ulps(got, x)
    # Where r = x - k ln 2 stays within +-ln(2)/2 (below 88.38), at most 2
    # ulp; above it k is clamped to 127 and r reaches ln 2: at most 5.
    assert err[x < 88.37].max() <= 2.0, x[x < 88.37][np.argmax(err[x < 88.37])]
    assert err.max() <= 5.0, x[np.argmax(err)]
    # Not merely close: most results are rounded as exp rounded once.
    assert np.mean(err < 0.5) > 0.8
    assert got[x == 0.0].tolist() == [1.0, 1.0]


def test_exp_edges():
    nan = vector_exp(np.float32([np.nan, -np.nan]))
    assert np.isnan(nan).all()
    over = vector_exp(np.float32([np.inf, 88.73, 89.0, 100.0, 1e30, 3.4e38]))
    assert (over == np.inf).all()
    # Below 2^-126 the results are subnormal or 0: flushed to 0 from x =
    # -87.68 down (so are upstream's), never negative, never above the
    # smallest normal.
    under = vector_exp(np.float32([-np.inf, -87.7, -88.0, -90.0, -104.0, -1e30, -3.4e38]))
    assert (under == 0.0).all()
    subnormal = np.linspace(-103.9, LOWEST_NORMAL, 1001, dtype=np.float32)
    small = vector_exp(subnormal)
    assert (small >= 0).all() and (small <= np.finfo(np.float32).tiny).all()


def test_exp_agrees_with_libm():
    # The same kernel with `approximate_math=False` calls libm per lane.
    x = np.random.default_rng(1).uniform(-80.0, 80.0, 4096).astype(np.float32)
    fast = vector_exp(x)
    exact = vector_exp(x, approximate_math=False)
    assert ulps(exact, x).max() <= 1.0
    assert (np.abs(fast.astype(np.float64) - exact) / np.spacing(exact)).max() <= 3.0


@pytest.mark.parametrize("n", [16, 48])
def test_exp_is_deterministic(n):
    x = np.linspace(-10, 10, n, dtype=np.float32)
    np.testing.assert_array_equal(vector_exp(x), vector_exp(x))
