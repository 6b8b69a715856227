"""Results written into the caller's arrays: `f(x, out=y)`, the arrays the
runner allocates when there is no `out`, and the checks on `out`."""

import numpy as np
import pytest

from fuel_mlir import runner

TWO = """
func.func @two(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>) {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %t = arith.constant dense<[1, 0, 3, 2]> : tensor<4xi64>
  %l = fuel.fused fused_softmax_cross_entropy (%x, %t) : (tensor<4x32xf32>, tensor<4xi64>) -> tensor<f32>
  return %y, %l, %x : tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>
}
"""

DYNAMIC = """
func.func @d(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
"""


def softmax(x):
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def cross_entropy(x, t):
    x = x.astype(np.float64)
    lse = np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)) + x.max(-1)
    return (lse - x[np.arange(len(t)), t]).mean()


@pytest.fixture(scope="module")
def two():
    return runner.compile(TWO, "two")


def test_results_go_into_out(two):
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    out = (np.full((4, 32), np.nan, np.float32), np.full((), np.nan, np.float32),
           np.full((4, 32), np.nan, np.float32))
    got = two(x, out=out)
    assert got is out
    np.testing.assert_allclose(out[0], softmax(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], cross_entropy(x, [1, 0, 3, 2]), rtol=1e-5)
    # A result that is an argument is copied, never aliased.
    np.testing.assert_array_equal(out[2], x)
    assert not np.shares_memory(out[2], x)


def test_new_arrays_without_out(two):
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    y, loss, same = two(x)
    np.testing.assert_allclose(y, softmax(x), rtol=1e-5, atol=1e-6)
    assert loss.shape == () and y.flags.owndata and y.flags.writeable
    # Each call gets its own arrays.
    y2, _, _ = two(x)
    assert not np.shares_memory(y, y2)
    np.testing.assert_array_equal(y, y2)


def test_one_result_and_reuse():
    text = TWO.replace("-> (tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>)",
                       "-> tensor<4x32xf32>").replace(
        "return %y, %l, %x : tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>",
        "return %y : tensor<4x32xf32>")
    f = runner.compile(text, "two")
    out = np.empty((4, 32), np.float32)
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((4, 32)).astype(np.float32)
        assert f(x, out=out) is out
        np.testing.assert_allclose(out, softmax(x), rtol=1e-5, atol=1e-6)


def test_dynamic_result_is_copied_into_out():
    f = runner.compile(DYNAMIC, "d")
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    out = np.zeros((3, 8), np.float32)
    assert f(x, out=out) is out
    np.testing.assert_array_equal(out, 2 * x + 1)
    np.testing.assert_array_equal(f(x), 2 * x + 1)
    with pytest.raises(runner.RunnerError, match=r"out= arrays must have the result shapes \[\[3, 8\]\]"):
        f(x, out=np.zeros((2, 8), np.float32))


@pytest.mark.parametrize("out,message", [
    (np.zeros((4, 32), np.float32), "two has 3 results, got 1 arrays in out="),
    ((np.zeros((4, 32), np.float64), np.zeros((), np.float32), np.zeros((4, 32), np.float32)),
     r"out\[0\] must have dtype float32"),
    ((np.zeros((4, 32), np.float32), np.zeros((1,), np.float32), np.zeros((4, 32), np.float32)),
     r"out\[1\] must have shape \[\]"),
    ((np.zeros((4, 32), np.float32), np.zeros((), np.float32), np.zeros((32, 4), np.float32).T),
     r"out\[2\] must be a writable C-contiguous array"),
    ((np.zeros((4, 32), np.float32), np.zeros((), np.float32), [[0.0] * 32] * 4),
     r"out\[2\] must be a numpy array, got list"),
])
def test_bad_out(two, out, message):
    x = np.zeros((4, 32), np.float32)
    with pytest.raises(runner.RunnerError, match=message):
        two(x, out=out)


def test_read_only_out(two):
    x = np.zeros((4, 32), np.float32)
    y = np.zeros((4, 32), np.float32)
    y.flags.writeable = False
    out = (y, np.zeros((), np.float32), np.zeros((4, 32), np.float32))
    with pytest.raises(runner.RunnerError, match=r"out\[0\] must be a writable"):
        two(x, out=out)


def test_a_result_returned_twice():
    # One value for two results: each gets its own array (the compiled code
    # copies it), with or without out=.
    text = """
func.func @twice(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %y : tensor<4x16xf32>, tensor<4x16xf32>
}
"""
    f = runner.compile(text, "twice")
    x = np.random.default_rng(7).standard_normal((4, 16)).astype(np.float32)
    a, b = f(x)
    np.testing.assert_allclose(a, softmax(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a, b)
    assert not np.shares_memory(a, b)
    out = (np.zeros((4, 16), np.float32), np.zeros((4, 16), np.float32))
    f(x, out=out)
    np.testing.assert_array_equal(out[0], a)
    np.testing.assert_array_equal(out[1], a)


DYNAMIC_IN = """
func.func @s(%x: tensor<?x16xf32>, %n: index) -> tensor<4x16xf32> {
  %head = tensor.extract_slice %x[%n, 0] [4, 16] [1, 1] : tensor<?x16xf32> to tensor<4x16xf32>
  %y = fuel.fused softmax_last_dim (%head) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
"""


def test_dynamic_inputs_and_index_into_static_results():
    # Static results go into arrays (the packed-arguments frame): an input
    # of any row count and an index argument, call after call.
    f = runner.compile(DYNAMIC_IN, "s")
    for rows, start in [(4, 0), (9, 5), (6, 1)]:
        x = np.random.default_rng(rows).standard_normal((rows, 16)).astype(np.float32)
        np.testing.assert_allclose(f(x, start), softmax(x[start:start + 4]), rtol=1e-5, atol=1e-7)


def test_calls_from_many_threads():
    # Each thread has its own argument frame: concurrent calls with
    # different inputs each get their own results.
    import concurrent.futures
    f = runner.compile(TWO, "two")
    inputs = [np.random.default_rng(i).standard_normal((4, 32)).astype(np.float32)
              for i in range(16)]

    def call(x):
        for _ in range(20):
            y, _, z = f(x)
            assert np.array_equal(z, x)
        return y

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for x, y in zip(inputs, pool.map(call, inputs)):
            np.testing.assert_allclose(y, softmax(x), rtol=1e-5, atol=1e-7)
