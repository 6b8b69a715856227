"""The runner's one-call path (`FastCall`, python/FastCall.cpp): what it takes
as it is and runs, what it hands back to the Python path (which converts or
explains), and that both give the same results; for results of dynamic
shape, the arrays it returns over the buffers they came back in."""

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


def on_threads(work):
    """Runs work(seed) on four threads at once, seeds 1 to 4."""
    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_exact_arguments_run_in_one_call(mixed):
    x, i, b = inputs()
    out = outs()
    # The extension's call itself: no results returned, results written.
    assert mixed._fast_call()(x, i, b, 2, *out) == ()
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
    assert mixed._fast_call()(x, i.view(np.uint32), b, 0, *out) == ()
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
    assert mixed._fast_call()(*args, *out) is None
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
    assert mixed._fast_call()(x, i, b) is None
    with pytest.raises(runner.RunnerError, match="takes 4 inputs, got 3"):
        mixed(x, i, b)


def test_index_out_of_range_is_handed_back(mixed):
    x, i, b = inputs()
    assert mixed._fast_call()(x, i, b, 2**70, *outs()) is None


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

    on_threads(work)
    assert not errors


# MIXED with results of dynamic shape: f32 rows, i32 and i1 (a bool array).
RETURNED = """
func.func @f(%x: tensor<?x8xf32>, %i: tensor<?xi32>, %b: tensor<?xi1>)
    -> (tensor<?x8xf32>, tensor<?xi32>, tensor<?xi1>) {
  %y = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %i, %c0 : tensor<?xi32>
  %e = tensor.empty(%n) : tensor<?xi32>
  %f = tensor.empty(%n) : tensor<?xi1>
  %j:2 = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>,
                                          affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                         iterator_types = ["parallel"]}
      ins(%b, %i : tensor<?xi1>, tensor<?xi32>) outs(%e, %f : tensor<?xi32>, tensor<?xi1>) {
  ^bb0(%c: i1, %v: i32, %o: i32, %p: i1):
    %z = arith.constant 0 : i32
    %r = arith.select %c, %v, %z : i32
    %t = arith.cmpi sgt, %v, %z : i32
    linalg.yield %r, %t : i32, i1
  } -> (tensor<?xi32>, tensor<?xi1>)
  return %y, %j#0, %j#1 : tensor<?x8xf32>, tensor<?xi32>, tensor<?xi1>
}
"""


@pytest.fixture(scope="module")
def returned():
    return runner.compile(RETURNED, "f")


def test_dynamic_results_come_back_from_one_call(returned):
    """The extension's call returns the results as arrays of the results'
    dtypes and run-time shapes, over the buffers they came back in (not
    copies), and hands back what it does not take without running."""
    for rows in (0, 1, 6):
        x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
        i = np.int32([5, -6, 7, -8, 9, 0, -1][:rows])
        b = np.arange(rows) % 3 != 1
        got = returned._fast_call()(x, i, b)
        assert [(g.dtype, g.shape) for g in got] == [
            (np.float32, (rows, 8)), (np.int32, (rows,)), (np.bool_, (rows,))]
        assert all(g.flags.c_contiguous and g.flags.writeable for g in got)
        if rows:
            assert not any(g.flags.owndata for g in got)
        np.testing.assert_array_equal(got[0], 2 * x + 1)
        np.testing.assert_array_equal(got[1], np.where(b, i, 0))
        np.testing.assert_array_equal(got[2], i > 0)
        # The runner's call is the same, a tuple of three.
        for g, e in zip(returned(x, i, b), got):
            np.testing.assert_array_equal(g, e)
    # A strided input, a list: handed back, converted by the Python path.
    x = np.arange(96, dtype=np.float32).reshape(6, 16)[:, ::2]
    i, b = np.int32([1, 2, 3]), np.array([True, False, True])
    assert returned._fast_call()(x, i, b) is None
    assert returned._fast_call()([list(r) for r in x], i, b) is None
    for got in (returned(x, i, b), returned([list(r) for r in x], i, b)):
        np.testing.assert_array_equal(got[0], 2 * x + 1)
        np.testing.assert_array_equal(got[1], [1, 0, 3])
    with pytest.raises(runner.RunnerError, match="must have dtype int32"):
        returned(np.ascontiguousarray(x), i.astype(np.int64), b)


def test_dynamic_results_on_threads(returned):
    # Each thread's frame holds its own results' descriptors: concurrent
    # calls of different sizes get their own.
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            rows = int(rng.integers(0, 12))
            x = rng.standard_normal((rows, 8)).astype(np.float32)
            i = rng.integers(-9, 9, rows).astype(np.int32)
            b = rng.integers(0, 2, rows).astype(bool)
            y, j, c = returned(x, i, b)
            if not (np.array_equal(y, 2 * x + 1) and np.array_equal(j, np.where(b, i, 0))
                    and np.array_equal(c, i > 0)):
                errors.append((seed, rows))

    on_threads(work)
    assert not errors


BF16 = """
func.func @f(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) -> (tensor<?x8xbf16>, tensor<4x8xbf16>) {
  %y = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%x) : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %v = fuel.fused inplace_affine {mul = 1.0 : f64, add = -1.0 : f64} (%w) : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %y, %v : tensor<?x8xbf16>, tensor<4x8xbf16>
}
"""


def test_bf16_in_one_call():
    """bf16 (ml_dtypes' numpy type, which has no buffer format) goes
    through the one call too: its arrays are read, and its results made,
    as 16-bit integers viewed as bf16. An array of another dtype for a
    bf16 slot (f16, also 16 bits) is handed back, and the Python path
    says what is wrong."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    f = runner.compile(BF16, "f")
    x = (np.arange(40) % 9).astype(bf16).reshape(5, 8)
    w = (np.arange(32) % 5).astype(bf16).reshape(4, 8)
    got = f._fast_call()(x, w)
    assert got is not None and [g.dtype for g in got] == [bf16, bf16]
    assert [g.shape for g in got] == [(5, 8), (4, 8)]
    np.testing.assert_array_equal(got[0].astype(np.float32), 2 * x.astype(np.float32) + 1)
    np.testing.assert_array_equal(got[1].astype(np.float32), w.astype(np.float32) - 1)
    assert f._fast_call()(x.astype(np.float16), w) is None
    assert f._fast_call()(x, w.astype(np.float16)) is None
    with pytest.raises(runner.RunnerError, match="must have dtype bfloat16"):
        f(x, w.astype(np.float16))
    # A strided bf16 view: handed back, converted by the Python path.
    wide = np.repeat(x, 2, axis=1)[:, ::2]
    assert f._fast_call()(wide, w) is None
    np.testing.assert_array_equal(f(wide, w)[0].astype(np.float32),
                                  2 * x.astype(np.float32) + 1)
    # Static results: written into bf16 out arrays, through the one call.
    static = runner.compile(BF16.replace("?x8", "5x8"), "f")
    outs = (np.zeros((5, 8), bf16), np.zeros((4, 8), bf16))
    assert static._fast_call()(x, w, *outs) == ()
    np.testing.assert_array_equal(outs[0].astype(np.float32), 2 * x.astype(np.float32) + 1)
    np.testing.assert_array_equal(outs[1].astype(np.float32), w.astype(np.float32) - 1)
    assert static._fast_call()(x, w, outs[0].astype(np.float16), outs[1]) is None
