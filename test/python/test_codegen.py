"""The row-wise schedule (softmax, RMS and layer norm, their backwards and
inplace_affine tiled per row and vectorized, fuel-codegen-cpu) and the vector math approximations compute
what docs/FusedOps.md says, within its tolerances, against numpy in float64:
scheduled shapes (rows a multiple of the vector width, leading dims of any
rank), shapes it leaves to the scalar path, f32/f16/bf16, the pipeline's
options, and inputs that reach the edges of the approximated exp."""

import subprocess

import numpy as np
import pytest

from fuel_mlir import ir, passmanager, runner
import references
from numerics import BF16, assert_close, fused_text, rand
from references import ref_softmax, ref_softmax_bwd

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))

EPS = 1e-5


def f64(a):
    return np.asarray(a, dtype=np.float64)


def ref_rms(x):
    return references.ref_rms(x, EPS)


def ref_layer(x):
    return references.ref_layer(x, EPS)


OPS = [("softmax_last_dim", {}, ref_softmax),
       ("rms_norm_last_dim", {"eps": EPS}, ref_rms),
       ("layer_norm_last_dim", {"eps": EPS}, ref_layer)]

# Scheduled: rows of 16, 64 and 4096 (with the default vector width 16),
# leading dims of rank 1 and 3; rows that are not a multiple of the vector
# width (a last partial step in scalar loops; 1000 = 15 steps of 64 and 40,
# or 62 steps of 16 and 8). Not scheduled: a row shorter than a vector, a
# 1-D input.
SCHEDULED = [(8, 64), (2, 3, 2, 16), (3, 4096), (4, 20), (5, 1000), (2, 3, 17),
             (3, 127)]
UNSCHEDULED = [(4, 15), (48,)]


def run(name, x, params, **options):
    text = fused_text(name, [x], params)
    return runner.compile(text, "f", **options)(x)


@pytest.mark.parametrize("name,params,ref", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("shape", SCHEDULED + UNSCHEDULED,
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_row_ops(name, params, ref, shape, dname, dtype):
    x = rand(shape, dtype, seed=len(shape))
    assert_close(run(name, x, params), ref(f64(x)), dname)


# Any number of rows: leading dims dynamic (`?`), the row length static.
# One compiled function runs every row count, including none.
@pytest.mark.parametrize("name,params,ref", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_row_ops_dynamic_rows(name, params, ref, dname, dtype):
    x = rand((2, 5, 40), dtype, seed=12)
    text = fused_text(name, [x], params, dynamic={0: (0, 1)})
    assert "tensor<?x?x40x" in text
    f = runner.compile(text, "f")
    for shape in [(2, 5, 40), (7, 1, 40), (1, 3, 40), (0, 4, 40)]:
        y = rand(shape, dtype, seed=len(shape) + shape[0])
        got = f(y)
        assert got.shape == shape
        assert_close(got, ref(f64(y)), dname)


def test_dynamic_rows_compile_without_full_size_passes():
    # No full-size op is left next to the row loop: every op of the
    # decomposition runs a row at a time.
    from fuel_mlir import ir, passmanager
    x = rand((4, 64), np.float32)
    text = fused_text("softmax_last_dim", [x], {}, dynamic={0: (0,)})
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        out = str(module)
    assert "fuel.fused" not in out and "scf.forall" in out
    assert "linalg.generic" not in out and "linalg.fill" not in out


def ref_layer_bwd(x, g):
    return references.ref_layer_bwd(x, g, EPS)


def ref_rms_bwd(x, g):
    return references.ref_rms_bwd(x, g, EPS)


BACKWARDS = [("softmax_last_dim_backward", {}, ref_softmax_bwd),
             ("layer_norm_last_dim_backward", {"eps": EPS}, ref_layer_bwd),
             ("rms_norm_last_dim_backward", {"eps": EPS}, ref_rms_bwd)]


@pytest.mark.parametrize("name,params,ref", BACKWARDS, ids=[o[0] for o in BACKWARDS])
@pytest.mark.parametrize("shape", [(8, 64), (2, 3, 32), (4, 20)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_row_backwards(name, params, ref, shape, dname, dtype):
    x = rand(shape, dtype, seed=1)
    if name.startswith("softmax"):
        # y is a softmax output.
        x = ref_softmax(f64(x)).astype(dtype)
    g = rand(shape, dtype, seed=2)
    text = fused_text(name, [x, g], params)
    got = runner.compile(text, "f")(x, g)
    assert_close(got, ref(f64(x), f64(g)), dname)


# reduce_max_to_backward where g reduces x's last dim alone: row-wise (the
# row's max and the count of its ties in vectors, dx in the same row loop).
# Values rounded to halves so that rows have ties. Shapes the schedule does not take (g reducing more dims, a short row) run
# as decomposed.
@pytest.mark.parametrize("xs,gs", [((8, 64), (8, 1)), ((2, 3, 1000), (2, 3, 1)), ((5, 20), (5, 1)),
                                   ((3, 4, 40), (1, 4, 1)), ((4, 10), (4, 1))],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_reduce_max_backward(xs, gs, dname, dtype):
    x = (np.round(rand(xs, np.float32, seed=3) * 2) / 2).astype(dtype)
    g = rand(gs, dtype, seed=4)
    text = fused_text("reduce_max_to_backward", [x, g])
    got = runner.compile(text, "f")(x, g)
    assert_close(got, references.reduce_max_backward(f64(x), f64(g)), dname)


def test_reduce_max_backward_schedule_and_declines(fuel_opt):
    x, g = np.zeros((8, 64), np.float32), np.zeros((8, 1), np.float32)
    with ir.Context():
        module = ir.Module.parse(fused_text("reduce_max_to_backward", [x, g]))
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        out = str(module)
    assert "fuel.fused" not in out and "scf.forall" in out and "vector.multi_reduction <maximumf>" in out
    # g reducing dims 0 and 2: left to the decomposition, with the reason.
    text = fused_text("reduce_max_to_backward", [np.zeros((3, 4, 40), np.float32), np.zeros((1, 4, 1), np.float32)])
    result = subprocess.run([fuel_opt, "--fuel-codegen-cpu=report=true"],
                            input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "the row-wise schedule needs g to reduce x's last dim alone" in result.stderr
    assert "fuel.fused" in result.stdout


# The rotary schedule (rope): a row per iteration, the row's pairs in
# vectors of up to 16 (a half row of 32: 2 steps of 16; of 4, 300 and 10:
# vectors of 4, 4 and 2); rank 2 and 4; f16, bf16.
@pytest.mark.parametrize("shape", [(7, 64), (2, 3, 5, 8), (1, 2, 9, 600), (3, 1, 13, 20)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_rope(shape, dname, dtype):
    x, cos, sin = rand(shape, dtype, seed=5), rand(shape[-2:], dtype, seed=6), rand(shape[-2:], dtype, seed=7)
    got = runner.compile(fused_text("rope", [x, cos, sin]), "f")(x, cos, sin)
    h = shape[-1] // 2
    x64 = f64(x)
    want = x64 * f64(cos) + np.concatenate([-x64[..., h:], x64[..., :h]], -1) * f64(sin)
    assert got.dtype == dtype
    assert_close(got, want, dname)


def test_rope_schedule_and_declines(fuel_opt):
    args = [np.zeros((2, 128, 64), np.float32), np.zeros((128, 64), np.float32), np.zeros((128, 64), np.float32)]
    with ir.Context():
        module = ir.Module.parse(fused_text("rope", args))
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        out = str(module)
    assert "fuel.fused" not in out and "tensor.concat" not in out
    assert "scf.forall (%arg3) in (256)" in out and out.count("vector<16xf32>") >= 6
    # f64 and dynamic rows are left to the decomposition, with the reason.
    for args, dynamic, reason in [
            ([np.zeros((4, 8), np.float64)] * 3, None, "the rotary schedule handles f32, f16 and bf16"),
            ([np.zeros((3, 4, 8), np.float32)] + [np.zeros((4, 8), np.float32)] * 2, {0: (0,)},
             "the rotary schedule needs static shapes")]:
        text = fused_text("rope", args, dynamic=dynamic)
        result = subprocess.run([fuel_opt, "--fuel-codegen-cpu=report=true"], input=text,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert reason in result.stderr and "fuel.fused" in result.stdout


@pytest.mark.parametrize("shape", [(8, 64), (3, 48), (5, 7)], ids=lambda s: "x".join(map(str, s)))
def test_inplace_affine(shape):
    x = rand(shape, np.float32, seed=6)
    text = fused_text("inplace_affine", [x], {"mul": 1.5, "add": -0.25})
    np.testing.assert_array_equal(runner.compile(text, "f")(x),
                                  (x * np.float32(1.5) + np.float32(-0.25)).astype(np.float32))


@pytest.mark.parametrize("name,params,ref", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("options", [dict(codegen=False),
                                     dict(approximate_math=False)],
                         ids=["no-codegen", "exact-math"])
def test_pipeline_options(name, params, ref, options):
    x = rand((4, 32), np.float32, seed=3)
    assert_close(run(name, x, params, **options), ref(f64(x)), "f32")


@pytest.mark.parametrize("name,params", [("rms_norm_last_dim", {"eps": EPS}),
                                         ("layer_norm_last_dim", {"eps": EPS})],
                         ids=["rms_norm", "layer_norm"])
def test_reciprocal_within_ulps_of_divide(name, params):
    # The schedule multiplies each row by the reciprocal of its statistic;
    # `approximate_math=False` divides (the norms compute no exp, so that is
    # the only difference). Rows of very different scales; every element
    # within 2 ulp of the divided one.
    x = rand((64, 256), np.float32, seed=13)
    x *= np.logspace(-6, 6, 64, dtype=np.float32)[:, None]
    fast = run(name, x, params)
    exact = run(name, x, params, approximate_math=False)
    ulps = np.abs(fast.astype(np.float64) - exact) / np.spacing(np.abs(exact))
    assert ulps.max() <= 2.0
    assert (ulps > 0).any(), "the two options should round differently somewhere"
    assert_close(fast, ref_rms(f64(x)) if name.startswith("rms") else ref_layer(f64(x)), "f32")


def test_softmax_exp_range():
    # exp's argument spans its whole f32 range: rows of huge spread (down to
    # -170, where exp underflows to 0), -inf entries (masked scores), tiny
    # differences, a constant row.
    x = np.zeros((6, 32), np.float32)
    x[0] = np.linspace(-170.0, 0.0, 32)
    x[1] = np.linspace(-20.0, 20.0, 32)
    x[2, ::2] = -np.inf
    x[3] = np.linspace(0.0, 1e-3, 32)
    x[4] = 7.0
    x[5] = rand((32,), np.float32, seed=5) * 30.0
    got = run("softmax_last_dim", x, {})
    assert np.isfinite(got).all()
    assert_close(got, ref_softmax(f64(x)), "f32")
    assert (got[2, ::2] == 0.0).all()


def test_scheduled_results_are_deterministic():
    x = rand((16, 64), np.float32, seed=9)
    text = fused_text("layer_norm_last_dim", [x], {"eps": EPS})
    f = runner.compile(text, "f")
    first = f(x)
    assert np.array_equal(first, f(x))
    assert np.array_equal(first, runner.compile(text, "f")(x))


@pytest.mark.parametrize("name,params,ref", OPS, ids=[o[0] for o in OPS])
def test_threads(name, params, ref):
    # Rows are independent: any number of threads computes the same bits.
    x = rand((33, 64), np.float32, seed=11)
    text = fused_text(name, [x], params)
    one = runner.compile(text, "f")(x)
    two = runner.compile(text, "f", threads=2)(x)
    assert np.array_equal(one, two)
    assert_close(two, ref(f64(x)), "f32")


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_bad_threads(threads):
    x = rand((2, 16), np.float32)
    with pytest.raises(runner.RunnerError, match="threads must be a positive int"):
        runner.compile(fused_text("softmax_last_dim", [x]), "f", threads=threads)


def test_threads_without_async_runtime(monkeypatch):
    # Without the async runtime library: one thread, a warning, no crash.
    real = runner._find_library
    monkeypatch.setattr(runner, "_find_library",
                        lambda name: None if "async" in name else real(name))
    x = rand((4, 16), np.float32, seed=2)
    with pytest.warns(RuntimeWarning, match="running on one thread"):
        f = runner.compile(fused_text("softmax_last_dim", [x]), "f", threads=2)
    assert f.threads == 1
    assert_close(f(x), ref_softmax(f64(x)), "f32")


def test_threaded_functions_outlive_each_other():
    # Destroying one threaded function leaves the others running (they share
    # the async runtime's thread pool).
    import gc
    x = rand((64, 64), np.float32, seed=4)
    text = fused_text("softmax_last_dim", [x])
    keep = runner.compile(text, "f", threads=2)
    for _ in range(3):
        short = runner.compile(text, "f", threads=2)
        short(x)
        del short
        gc.collect()
    assert_close(keep(x), ref_softmax(f64(x)), "f32")


# fused_linear's contraction schedule: a[..., M, K] @ b[K, N] + bias, on
# register tiles of 8 x 32 (AVX-512), or 1 x 64 for M = 1 and 2 x 64 up to
# M = 4 (f32, and f16/bf16 widened in registers). A reduction longer than
# 256 runs in blocks of 16 rows of b (packed) from 32 rows of a, of 8
# (read in place) below, accumulated in the output tile, over cache tiles
# up to 4096 columns wide. M, N and K that are not multiples of the tile's
# and 16 are padded with zeros (and further when no cache tile of a useful
# size divides them: M = 100 to 128).
LINEAR = [((16, 32), 64), ((2, 8, 16), 32), ((128, 96), 512), ((72, 48), 96),
          ((4, 16), 20), ((6, 16), 32), ((8, 20), 32),
          ((16, 512), 64), ((8, 384), 32), ((2, 8, 768), 32),
          ((1, 1), 1), ((3, 5, 7), 9), ((33, 300), 65), ((100, 1000), 40),
          ((1, 600), 96), ((2, 520), 4160), ((3, 272), 64), ((2, 3, 1, 300), 72),
          ((40, 320), 4128), ((4, 48), 200), ((16, 1, 272), 64), ((3, 2, 5, 40), 48)]


@pytest.mark.parametrize("a_shape,n", LINEAR, ids=lambda v: str(v))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_fused_linear(a_shape, n, dname, dtype):
    # Scaled so that a row's products sum to O(1) whatever K is, the scale
    # the tolerances are for.
    a = rand(a_shape, dtype, seed=1, scale=a_shape[-1] ** -0.5)
    b = rand((a_shape[-1], n), dtype, seed=2)
    bias = rand((n,), dtype, seed=3)
    text = fused_text("fused_linear", [a, b, bias])
    got = runner.compile(text, "f")(a, b, bias)
    want = f64(a) @ f64(b) + f64(bias)
    # f32 sums of up to 512 products: the looser class (docs/FusedOps.md);
    # the scalar path is off by as much.
    assert_close(got, want, dname, loose=True)


# The register tiles for other targets' registers than the host's (LLVM
# splits or joins the vectors): AVX-512's 8x32 tiles, AVX2's 4x16, SSE's or
# NEON's, and the narrow ones of 1 to 4 rows; shapes with padding, a
# reduction in blocks (K > 256, the right operand packed per block), with
# M >= 32 (packed) and below (not).
REGISTER_FILES = [(32, 512), (16, 256), (16, 128), (32, 128)]


@pytest.mark.parametrize("registers", REGISTER_FILES, ids=lambda r: f"{r[0]}x{r[1]}")
@pytest.mark.parametrize("a_shape,n", [((128, 96), 512), ((64, 640), 256), ((100, 1000), 40),
                                       ((8, 384), 96), ((2, 40, 48), 80), ((1, 400), 160),
                                       ((3, 288), 96)],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("dname,dtype", [("f32", np.float32), ("f16", np.float16)],
                         ids=["f32", "f16"])
def test_fused_linear_register_files(registers, a_shape, n, dname, dtype):
    a = rand(a_shape, dtype, seed=7, scale=a_shape[-1] ** -0.5)
    b = rand((a_shape[-1], n), dtype, seed=8)
    bias = rand((n,), dtype, seed=9)
    text = fused_text("fused_linear", [a, b, bias])
    got = runner.compile(text, "f", vector_registers=registers)(a, b, bias)
    assert_close(got, f64(a) @ f64(b) + f64(bias), dname, loose=True)


def test_host_vector_registers():
    count, bits = runner.host_vector_registers()
    assert count >= 16 and bits >= 128 and bits % 128 == 0
    import platform
    if platform.machine() == "x86_64":
        try:
            with open("/proc/cpuinfo") as info:
                flags = next(l for l in info if l.startswith("flags")).split()
        except (OSError, StopIteration):
            pytest.skip("no /proc/cpuinfo flags")
        want = (32, 512) if "avx512f" in flags else (16, 256) if "avx" in flags else (16, 128)
        assert (count, bits) == want


@pytest.mark.parametrize("registers", [(2, 256), (16, 100), (16,), "16x256", (16.0, 256),
                                       (True, 256)], ids=str)
def test_bad_vector_registers(registers):
    text = fused_text("softmax_last_dim", [rand((2, 16))], {})
    with pytest.raises(runner.RunnerError, match="vector_registers must be"):
        runner.compile(text, "f", vector_registers=registers)


# Rows that are dynamic (M and the dims before K): one compiled function
# for every row count, the rows padded to a multiple of the register tile's
# (8 with AVX-512, 4 with AVX2) at run time; a cache tile takes up to 64 or
# 128 of them (here 300 and 303 rows: 3 cache tiles, the last partial).
# Branches on the row count: 1 row, 2 to 4 rows (3, 4 and 2 here), 5 to 16
# rows read b in place (6, 9, 10, 12, 13 and 16), more pack it.
@pytest.mark.parametrize("a_shape,n,dynamic", [((20, 48), 64, (0,)), ((2, 5, 300), 40, (0, 1)),
                                               ((13, 300), 40, (0,)),
                                               ((3, 16), 32, (0,)), ((300, 272), 48, (0,)),
                                               ((6, 1, 300), 40, (0,)), ((2, 3, 48), 32, (1,)),
                                               ((2, 2, 272), 32, (0, 1))],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_fused_linear_dynamic_rows(a_shape, n, dynamic, dname, dtype):
    k = a_shape[-1]
    b = rand((k, n), dtype, seed=2)
    bias = rand((n,), dtype, seed=3)
    a = rand(a_shape, dtype, seed=1, scale=k ** -0.5)
    text = fused_text("fused_linear", [a, b, bias], dynamic={0: dynamic})
    f = runner.compile(text, "f")
    grown = tuple(d + 3 if i in dynamic else d for i, d in enumerate(a_shape[:-1]))
    ones = tuple(1 if i in dynamic else d for i, d in enumerate(a_shape[:-1]))
    for rows in [a_shape[:-1], grown, ones]:
        x = rand(rows + (k,), dtype, seed=sum(rows), scale=k ** -0.5)
        got = f(x, b, bias)
        assert got.shape == rows + (n,)
        assert_close(got, f64(x) @ f64(b) + f64(bias), dname, loose=True)


# Two threads: at least four cache tiles (one row of a: the columns split in
# four), each output summed in the same order as on one thread. With
# dynamic rows, 10 rows run in the branch of at most 16 (the columns split
# as for one cache tile of rows).
@pytest.mark.parametrize("m,k,n,dynamic", [(64, 512, 512, False), (1, 320, 4096, False),
                                           (10, 320, 4096, True)], ids=str)
def test_fused_linear_threads(m, k, n, dynamic):
    a = rand((m, k), seed=4, scale=k ** -0.5)
    b, bias = rand((k, n), seed=5), rand((n,), seed=6)
    text = fused_text("fused_linear", [a, b, bias], dynamic={0: (0,)} if dynamic else None)
    one = runner.compile(text, "f")(a, b, bias)
    two = runner.compile(text, "f", threads=2)(a, b, bias)
    assert np.array_equal(one, two)
    assert_close(two, f64(a) @ f64(b) + f64(bias), "f32", loose=True)
