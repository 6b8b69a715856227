"""The runner's one-call path (`FastCall`, python/FastCall.cpp): what it takes
as it is and runs, what it hands back to the Python path (which converts or
explains), and that both give the same results."""

import threading

import numpy as np
import pytest

from fuel_mlir import runner

MIXED = """
func.func @f(%x: tensor<?x8xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>, %n: index)
    -> (tensor<4x8xf32>, tensor<4xi32>) {
  %s = tensor.extract_slice %x[%n, 0] [4, 8] [1, 1] : tensor<?x8xf32> to tensor<4x8xf32>
  %y = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4xi32>
  %j = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>,
                                        affine_map<(d) -> (d)>],
                       iterator_types = ["parallel"]}
      ins(%b, %i : tensor<4xi1>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%c: i1, %v: i32, %o: i32):
    %z = arith.constant 0 : i32
    %r = arith.select %c, %v, %z : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %y, %j : tensor<4x8xf32>, tensor<4xi32>
}
"""


@pytest.fixture(scope="module")
def mixed():
    return runner.compile(MIXED, "f")


def inputs(rows=6):
    x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
    i = np.int32([5, -6, 7, -8])
    b = np.array([True, False, True, True])
    return x, i, b


def want(x, i, b, n):
    return 2 * x[n:n + 4] + 1, np.where(b, i, 0).astype(np.int32)


def outs():
    return np.full((4, 8), np.nan, np.float32), np.full(4, -1, np.int32)


def test_exact_arguments_run_in_one_call(mixed):
    x, i, b = inputs()
    out = outs()
    # The extension's call itself: True, results written.
    assert mixed._fast_call()(x, i, b, 2, *out) is True
    for got, expected in zip(out, want(x, i, b, 2)):
        np.testing.assert_array_equal(got, expected)
    # Through the runner, with and without out=; dynamic sizes, an index.
    for rows, n in ((4, 0), (9, 5)):
        x, i, b = inputs(rows)
        got = mixed(x, i, b, n)
        for g, e in zip(got, want(x, i, b, n)):
            np.testing.assert_array_equal(g, e)
        out = outs()
        assert mixed(x, i, b, n, out=out) is out
        for g, e in zip(out, want(x, i, b, n)):
            np.testing.assert_array_equal(g, e)


def test_integers_of_either_signedness(mixed):
    x, i, b = inputs()
    out = outs()
    # i32 is signless: a uint32 array of the same bits is taken as it is.
    assert mixed._fast_call()(x, i.view(np.uint32), b, 0, *out) is True
    np.testing.assert_array_equal(out[1], np.where(b, i, 0))


def handed_back():
    """Arguments the one-call path does not take as they are: (name, args,
    outs), each of which the Python path converts (None) or rejects (the
    message)."""
    x, i, b = inputs()
    o = outs()
    read_only = np.zeros((4, 8), np.float32)
    read_only.flags.writeable = False
    return [
        ("list input", ([list(r) for r in x], i, b, 0), o, None),
        ("strided input", (np.repeat(x, 2, axis=1)[:, ::2], i, b, 1), o, None),
        ("transposed input", (np.ascontiguousarray(x.T).T, i, b, 1), o, None),
        ("float64 input", (x.astype(np.float64), i, b, 0), o, "must have dtype float32"),
        ("static size", (x, np.int32([1, 2, 3]), b, 0), o, r"must have shape \[4\]"),
        ("rank", (x[0], i, b, 0), o, r"must have shape \[\?, 8\]"),
        ("bool as int", (x, i, b.astype(np.uint8), 0), o, "must have dtype bool"),
        ("index as bool", (x, i, b, True), o, "is an index"),
        ("index as float", (x, i, b, 1.0), o, "is an index"),
        ("out not an array", (x, i, b, 0), (bytearray(128), o[1]), "must be a numpy array"),
        ("out read-only", (x, i, b, 0), (read_only, o[1]), "writable C-contiguous"),
        ("out strided", (x, i, b, 0), (np.zeros((4, 16), np.float32)[:, ::2], o[1]),
         "writable C-contiguous"),
        ("out dtype", (x, i, b, 0), (o[0], o[1].astype(np.int64)), "must have dtype int32"),
    ]


@pytest.mark.parametrize("name,args,out,message", handed_back(),
                         ids=[case[0] for case in handed_back()])
def test_anything_else_takes_the_python_path(mixed, name, args, out, message):
    before = [o.copy() if isinstance(o, np.ndarray) else bytes(o) for o in out]
    # Nothing runs: the out arrays are as they were.
    assert mixed._fast_call()(*args, *out) is False
    for o, b in zip(out, before):
        np.testing.assert_array_equal(o if isinstance(o, np.ndarray) else bytes(o), b)
    if message is None:
        got = mixed(*args, out=out)
        x = np.asarray(args[0], np.float32)
        for g, e in zip(got, want(x, args[1], args[2], args[3])):
            np.testing.assert_array_equal(g, e)
    else:
        with pytest.raises(runner.RunnerError, match=message):
            mixed(*args, out=out)


def test_wrong_argument_count(mixed):
    x, i, b = inputs()
    assert mixed._fast_call()(x, i, b) is False
    with pytest.raises(runner.RunnerError, match="takes 4 inputs, got 3"):
        mixed(x, i, b)


def test_index_out_of_range_is_handed_back(mixed):
    x, i, b = inputs()
    assert mixed._fast_call()(x, i, b, 2**70, *outs()) is False


def test_threads_each_have_their_own_frame(mixed):
    # Each thread's calls go through its own frame: concurrent calls with
    # different indices and sizes do not see each other's arguments.
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            rows = int(rng.integers(4, 12))
            n = int(rng.integers(0, rows - 3))
            x, i, b = inputs(rows)
            x = x * seed
            got = mixed(x, i, b, n)
            for g, e in zip(got, want(x, i, b, n)):
                if not np.array_equal(g, e):
                    errors.append((seed, rows, n))

    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
