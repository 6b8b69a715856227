"""The convolution schedule (conv2d: register tiles of 8 output columns by
32 or 16 filters (4 by 16 with AVX2's registers) accumulated as outer
products over (c, kh, kw) in blocks of channels, a row's tiles taking
each block in turn, a strided tile's pixels read from the padded input
every stride-th, a group's filters reading its channels; fuel-codegen-cpu) against the numpy
reference (references.conv2d, in float64): kernels 1x1, 3x3, 5x3, 7x7,
padding none, even and uneven, strides 1 to 4, groups, output widths
off the register tile, with and without bias, batches, f32/f16/bf16; and
filters-major tiles where the filters per group are not a multiple of 16
(depthwise, small groups, a few filters)."""

import numpy as np
import pytest

from fuel_mlir import ir, passmanager, runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand


def run(x, w, b, params, **options):
    args = [x, w] + ([b] if b is not None else [])
    return runner.compile(fused_text("conv2d", args, params), "f", **options)(*args)


def reference(x, w, b, stride=(1, 1), padding=(0, 0), groups=1):
    f64 = lambda a: None if a is None else np.asarray(a, dtype=np.float64)  # noqa: E731
    return ref.conv2d(f64(x), f64(w), f64(b), stride, padding, groups)


def assert_conv(out, x, w, b, params):
    """`out` is x's convolution with w (and b) with `params`, in f32."""
    want = reference(x, w, b, params.get("stride", (1, 1)), params.get("padding", (0, 0)),
                     params.get("groups", 1))
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


# (x shape, w shape, padding, bias)
SCHEDULED = [((1, 8, 10, 10), (32, 8, 3, 3), (1, 1), True),
             ((2, 3, 8, 16), (16, 3, 1, 1), (0, 0), False),
             ((1, 4, 12, 9), (32, 4, 5, 3), (2, 1), True),
             ((1, 16, 6, 14), (64, 16, 3, 3), (0, 1), True),
             ((1, 2, 7, 8), (16, 2, 3, 3), (1, 0), False)]


@pytest.mark.parametrize("xs,ws,padding,bias", SCHEDULED, ids=lambda v: str(v))
def test_scheduled(xs, ws, padding, bias):
    x, w = rand(xs, np.float32, 1), rand(ws, np.float32, 2)
    b = rand((ws[0],), np.float32, 3) if bias else None
    out = run(x, w, b, {"padding": padding})
    assert_close(out, reference(x, w, b, padding=padding), "f32", loose=True)


# The register tile follows the target's registers: 8 columns by 32
# filters for AVX-512's, 4 by 16 for AVX2's (an output width of 12 is
# scheduled with the latter, left to the decomposition with the former).
@pytest.mark.parametrize("registers", [(32, 512), (16, 256)], ids=lambda r: f"{r[0]}x{r[1]}")
@pytest.mark.parametrize("xs,ws,padding,bias", SCHEDULED + [((1, 4, 12, 12), (16, 4, 3, 3), (0, 1), True)],
                         ids=lambda v: str(v))
def test_register_files(registers, xs, ws, padding, bias):
    x, w = rand(xs, np.float32, 1), rand(ws, np.float32, 2)
    b = rand((ws[0],), np.float32, 3) if bias else None
    out = run(x, w, b, {"padding": padding}, vector_registers=registers)
    assert_close(out, reference(x, w, b, padding=padding), "f32", loose=True)


# The reduction in blocks of channels whose weights fit 16 KiB (3 x 3
# kernels: 16 channels of 16 filters with AVX2, 8 of 32 with AVX-512; a
# channel count with no such divisor, 37, in blocks of one), each block
# taken by all the column tiles of a row in turn (a row of 40 or 36
# columns: 10 or 9 AVX2 tiles in 2 iterations; narrow rows several to an
# iteration); groups, strides and a transposed convolution's phases in
# blocks too.
CHANNEL_BLOCKS = [
    ({"padding": (1, 1)}, (1, 64, 6, 40), (32, 64, 3, 3)),
    ({"padding": (1, 1)}, (1, 37, 5, 36), (16, 37, 3, 3)),
    ({"padding": (1, 1), "groups": 2}, (1, 96, 4, 20), (64, 48, 3, 3)),
    ({"padding": (1, 1), "stride": (2, 2)}, (2, 48, 9, 34), (32, 48, 3, 3)),
    ({}, (1, 300, 3, 12), (16, 300, 1, 1)),
    # Narrow rows, several to an iteration: 6 rows of 14 columns (AVX2: 3
    # rows of 4 tiles; AVX-512: 6 rows of 2), a strided 6 x 7 output.
    ({"padding": (1, 1)}, (1, 64, 6, 14), (32, 64, 3, 3)),
    ({"padding": (1, 1), "stride": (2, 2)}, (1, 48, 12, 14), (16, 48, 3, 3)),
]


@pytest.mark.parametrize("registers", [(32, 512), (16, 256)], ids=lambda r: f"{r[0]}x{r[1]}")
@pytest.mark.parametrize("params,xs,ws", CHANNEL_BLOCKS, ids=lambda v: str(v))
def test_channel_blocks(registers, params, xs, ws):
    # (The weight scaled by 1 / sqrt(fan-in): outputs of about one, whose
    # rounding the f32 tolerance covers over hundreds of products.)
    x, b = rand(xs, np.float32, 1), rand((ws[0],), np.float32, 3)
    w = (rand(ws, np.float32, 2) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
    out = run(x, w, b, params, vector_registers=registers)
    assert_conv(out, x, w, b, params)


def test_channel_blocks_transposed():
    x = rand((1, 40, 6, 7), np.float32, 4)
    w = (rand((40, 16, 3, 3), np.float32, 5) / np.sqrt(40 * 9)).astype(np.float32)
    params = {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 0)}
    out = runner.compile(fused_text("conv_transpose_2d", [x, w], params), "f")(x, w)
    want = ref.conv_transpose2d(x.astype(np.float64), w.astype(np.float64), (2, 2), (1, 1),
                                (1, 0), (1, 1), 1)
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


DTYPES = [("f16", np.float16)] + ([("bf16", BF16)] if BF16 is not None else [])


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_low_precision(dname, dtype):
    x, w, b = rand((1, 4, 6, 8), dtype, 1), rand((16, 4, 3, 3), dtype, 2), rand((16,), dtype, 3)
    out = run(x, w, b, {"padding": (1, 1)})
    assert out.dtype == dtype
    assert_close(out, reference(x, w, b, padding=(1, 1)), dname)


def test_threads():
    x, w, b = rand((1, 8, 16, 16), np.float32, 1), rand((32, 8, 3, 3), np.float32, 2), rand((32,), np.float32, 3)
    one = run(x, w, b, {"padding": (1, 1)})
    two = run(x, w, b, {"padding": (1, 1)}, threads=2)
    assert np.array_equal(one, two)


# (params, x shape, w shape): strides (ResNet's 7x7 stem, a 1x1 stride-2
# shortcut, uneven strides, a patch embedding), groups of 16 and 32 filters, both.
STRIDED_GROUPED = [
    ({"stride": (2, 2), "padding": (1, 1)}, (1, 4, 16, 16), (16, 4, 3, 3)),
    ({"stride": (2, 2), "padding": (3, 3)}, (1, 3, 32, 32), (64, 3, 7, 7)),
    ({"stride": (2, 2)}, (2, 8, 15, 16), (32, 8, 1, 1)),
    ({"stride": (3, 1), "padding": (1, 0)}, (1, 4, 10, 10), (16, 4, 3, 3)),
    ({"stride": (1, 3), "padding": (0, 2)}, (1, 2, 6, 20), (16, 2, 2, 5)),
    # A patch embedding: kernel and stride 4, 9 output columns (the last
    # tile reads 4 x 8 pixels from the padded input's column 32 on).
    ({"stride": (4, 4)}, (1, 3, 20, 36), (32, 3, 4, 4)),
    ({"groups": 2, "padding": (1, 1)}, (1, 4, 8, 8), (32, 2, 3, 3)),
    ({"groups": 4, "stride": (2, 2), "padding": (1, 1)}, (1, 8, 16, 16), (128, 2, 3, 3)),
    # Output widths off the register tile (7, 14, 5, 1): computed in whole
    # tiles, the extra columns dropped.
    ({"padding": (1, 1)}, (1, 4, 7, 7), (16, 4, 3, 3)),
    ({"stride": (2, 2), "padding": (1, 1)}, (1, 8, 28, 28), (32, 8, 3, 3)),
    ({}, (1, 4, 8, 7), (16, 4, 3, 3)),
    ({"stride": (2, 2)}, (2, 4, 3, 3), (16, 4, 3, 3)),
]


@pytest.mark.parametrize("registers", [(32, 512), (16, 256)], ids=lambda r: f"{r[0]}x{r[1]}")
@pytest.mark.parametrize("params,xs,ws", STRIDED_GROUPED, ids=lambda v: str(v))
def test_strided_and_grouped(registers, params, xs, ws):
    x, w, b = rand(xs, np.float32, 1), rand(ws, np.float32, 2), rand((ws[0],), np.float32, 3)
    out = run(x, w, b, params, vector_registers=registers)
    assert_conv(out, x, w, b, params)


@pytest.mark.parametrize("params,ws", [({"padding": (1, 1)}, (16, 4, 3, 3)),
                                       ({"stride": (2, 2), "groups": 2}, (32, 2, 3, 3))],
                         ids=["plain", "strided-grouped"])
def test_dynamic_batch(params, ws):
    # One compiled function for every batch (x's and y's dim 0 dynamic).
    x0, w, b = rand((1, 4, 9, 9), np.float32, 1), rand(ws, np.float32, 2), rand((ws[0],), np.float32, 3)
    f = runner.compile(fused_text("conv2d", [x0, w, b], params, dynamic={0: (0,)}), "f")
    for batch in (1, 3):
        x = rand((batch, 4, 9, 9), np.float32, batch)
        want = reference(x, w, b, params.get("stride", (1, 1)), params.get("padding", (0, 0)),
                         params.get("groups", 1))
        out = f(x, w, b)
        assert out.shape == want.shape
        assert_close(out, want, "f32", loose=True)


# Dynamic heights and widths (and batch): one compiled function for every
# image size, the padded sizes and the output's columns in whole tiles
# computed at run time; 64- and 8-filter tiles, strides 1 to 3, groups,
# depthwise, f16.
DYNAMIC_HW = [({"padding": (1, 1)}, (16, 4, 3, 3), (0, 2, 3)),
              ({"padding": (1, 1)}, (16, 4, 3, 3), (2,)),
              ({"stride": (2, 2), "padding": (1, 1), "groups": 2}, (32, 2, 3, 3), (2, 3)),
              ({"stride": (3, 1)}, (8, 4, 3, 2), (3,)),
              ({"padding": (2, 1), "groups": 4}, (4, 1, 5, 3), (2, 3))]


@pytest.mark.parametrize("params,ws,dims", DYNAMIC_HW, ids=lambda v: str(v))
def test_dynamic_height_width(params, ws, dims):
    x0, w, b = rand((1, 4, 9, 9), np.float32, 1), rand(ws, np.float32, 2), rand((ws[0],), np.float32, 3)
    f = runner.compile(fused_text("conv2d", [x0, w, b], params, dynamic={0: dims}), "f")
    for shape in [(1, 4, 9, 9), (2, 4, 5, 17), (1, 4, 31, 6), (1, 4, 3, 40)]:
        shape = tuple(n if d in dims else 9 if d >= 2 else s0
                      for d, (n, s0) in enumerate(zip(shape, (1, 4, 9, 9))))
        x = rand(shape, np.float32, sum(shape))
        want = reference(x, w, b, params.get("stride", (1, 1)), params.get("padding", (0, 0)),
                         params.get("groups", 1))
        out = f(x, w, b)
        assert out.shape == want.shape
        assert_close(out, want, "f32", loose=True)


def test_dynamic_height_width_low_precision():
    x0, w = rand((1, 8, 12, 12), np.float16, 1), rand((8, 1, 3, 3), np.float16, 2)
    params = {"stride": (2, 2), "padding": (1, 1), "groups": 8}
    f = runner.compile(fused_text("conv2d", [x0, w], params, dynamic={0: (2, 3)}), "f")
    for hw in [(12, 12), (7, 20)]:
        x = rand((1, 8) + hw, np.float16, hw[0])
        out = f(x, w)
        assert out.dtype == np.float16
        assert_close(out, reference(x, w, None, (2, 2), (1, 1), 8), "f16")


def test_dynamic_batch_transposed():
    x0, w = rand((1, 4, 5, 5), np.float32, 4), rand((4, 16, 3, 3), np.float32, 5)
    params = {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)}
    f = runner.compile(fused_text("conv_transpose_2d", [x0, w], params, dynamic={0: (0,)}), "f")
    for batch in (2, 1):
        x = rand((batch, 4, 5, 5), np.float16, batch).astype(np.float32)
        assert_close(f(x, w), transposed_reference(x, w, (2, 2), (1, 1), (1, 1)), "f32", loose=True)


def test_strided_low_precision():
    x, w = rand((1, 4, 16, 16), np.float16, 1), rand((32, 2, 3, 3), np.float16, 2)
    params = {"stride": (2, 2), "padding": (1, 1), "groups": 2}
    out = run(x, w, None, params)
    assert out.dtype == np.float16
    assert_close(out, reference(x, w, None, (2, 2), (1, 1), 2), "f16")


# Filters per group that are not a multiple of 16 (depthwise, a channel
# multiplier, small groups, a few filters): filters-major tiles of 1, 2 or
# 4 filters by 1 to 4 vectors of output columns; MobileNet's depthwise
# widths (112, 56 with stride 2, 14, 7), a 5x5 kernel, no bias.
FILTERS_MAJOR = [
    ({"groups": 4}, (1, 4, 8, 10), (4, 1, 3, 3)),
    ({"groups": 8, "padding": (1, 1)}, (1, 8, 112, 112), (8, 1, 3, 3)),
    ({"groups": 8, "padding": (1, 1), "stride": (2, 2)}, (2, 8, 112, 112), (8, 1, 3, 3)),
    ({"groups": 16, "padding": (1, 1)}, (1, 16, 14, 14), (16, 1, 3, 3)),
    ({"groups": 4, "padding": (2, 2)}, (1, 4, 7, 7), (4, 1, 5, 5)),
    ({"groups": 4, "padding": (1, 1)}, (1, 4, 9, 30), (8, 1, 3, 3)),
    ({"groups": 2}, (1, 4, 8, 10), (16, 2, 3, 3)),
    ({}, (1, 4, 10, 10), (8, 4, 3, 3)),
    ({"stride": (2, 1)}, (1, 3, 9, 20), (3, 3, 3, 3)),
    ({"groups": 3, "stride": (1, 2), "padding": (0, 1)}, (1, 6, 7, 33), (12, 2, 1, 3)),
    ({"groups": 8, "stride": (3, 3), "padding": (1, 1)}, (1, 8, 20, 23), (8, 1, 3, 3)),
]


@pytest.mark.parametrize("registers", [(32, 512), (16, 256)], ids=lambda r: f"{r[0]}x{r[1]}")
@pytest.mark.parametrize("params,xs,ws", FILTERS_MAJOR, ids=lambda v: str(v))
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_filters_major(registers, params, xs, ws, bias):
    x, w = rand(xs, np.float32, 1), rand(ws, np.float32, 2)
    b = rand((ws[0],), np.float32, 3) if bias else None
    out = run(x, w, b, params, vector_registers=registers)
    assert_conv(out, x, w, b, params)


def test_depthwise_dynamic_batch_low_precision():
    x0, w, b = rand((1, 8, 12, 12), np.float16, 1), rand((8, 1, 3, 3), np.float16, 2), \
        rand((8,), np.float16, 3)
    params = {"groups": 8, "padding": (1, 1)}
    f = runner.compile(fused_text("conv2d", [x0, w, b], params, dynamic={0: (0,)}), "f")
    for batch in (1, 3):
        x = rand((batch, 8, 12, 12), np.float16, batch)
        out = f(x, w, b)
        assert out.dtype == np.float16
        assert_close(out, reference(x, w, b, (1, 1), (1, 1), 8), "f16")


def test_transposed_few_filters():
    x, w = rand((1, 4, 6, 6), np.float32, 4), rand((4, 3, 3, 3), np.float32, 5)
    f = runner.compile(fused_text("conv_transpose_2d", [x, w], {"stride": (2, 2), "padding": (1, 1)}), "f")
    assert_close(f(x, w), transposed_reference(x, w, (2, 2), (1, 1), (0, 0)), "f32", loose=True)


def transposed_reference(x, w, stride, padding, output_padding):
    return ref.conv_transpose2d(np.asarray(x, np.float64), np.asarray(w, np.float64), stride,
                                padding, output_padding, (1, 1), 1)


# (x shape, w shape [C, F, kh, kw], stride, padding, output_padding); output
# widths of whole register tiles and not (9, 3).
TRANSPOSED = [((1, 4, 8, 8), (4, 16, 3, 3), (2, 2), (1, 1), (1, 1)),
              ((1, 4, 5, 5), (4, 16, 3, 3), (2, 2), (1, 1), (0, 0)),
              ((1, 2, 3, 1), (2, 32, 3, 3), (1, 1), (0, 0), (0, 0)),
              ((2, 3, 5, 7), (3, 32, 2, 2), (1, 1), (0, 0), (0, 0)),
              ((1, 8, 4, 4), (8, 16, 4, 4), (2, 2), (1, 1), (0, 0)),
              ((1, 2, 6, 3), (2, 16, 3, 3), (3, 2), (2, 0), (0, 1))]


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding", TRANSPOSED, ids=lambda v: str(v))
def test_transposed(xs, ws, stride, padding, output_padding):
    x, w = rand(xs, np.float32, 4), rand(ws, np.float32, 5)
    params = {"stride": stride, "padding": padding, "output_padding": output_padding}
    out = runner.compile(fused_text("conv_transpose_2d", [x, w], params), "f")(x, w)
    assert_close(out, transposed_reference(x, w, stride, padding, output_padding), "f32", loose=True)


# (x shape, w shape [C, F / groups, kh, kw], stride, padding,
# output_padding, groups): two groups of 16 filters (register tiles), three
# of 2 (filters-major tiles), padding past the kernel, a kernel smaller than
# the stride (the phases no tap reaches are zeros), strides 1 and 3; kernels
# of 25 and 49 taps (the weight packed for all phases in squares of 8 taps,
# the last square part zeros), two groups of 32 filters.
TRANSPOSED_MORE = [((1, 8, 5, 6), (8, 16, 3, 3), (2, 2), (1, 1), (1, 0), 2),
                   ((1, 8, 6, 6), (8, 32, 5, 5), (2, 2), (2, 2), (1, 1), 2),
                   ((1, 4, 3, 3), (4, 16, 7, 7), (4, 4), (3, 3), (1, 1), 1),
                   ((1, 6, 5, 5), (6, 2, 3, 3), (2, 2), (0, 0), (0, 0), 3),
                   ((1, 4, 5, 5), (4, 8, 3, 3), (2, 2), (3, 3), (1, 1), 1),
                   ((1, 2, 4, 4), (2, 16, 1, 2), (3, 3), (0, 0), (2, 1), 1),
                   ((2, 3, 4, 5), (3, 16, 3, 2), (1, 3), (2, 1), (0, 2), 1)]


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding,groups", TRANSPOSED_MORE, ids=lambda v: str(v))
def test_transposed_phases(xs, ws, stride, padding, output_padding, groups):
    x, w = rand(xs, np.float32, 4), rand(ws, np.float32, 5)
    params = {"stride": stride, "padding": padding, "output_padding": output_padding, "groups": groups}
    text = fused_text("conv_transpose_2d", [x, w], params)
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        scheduled = str(module)
    assert "fuel.fused" not in scheduled and "vector.outerproduct" in scheduled
    out = runner.compile(text, "f")(x, w)
    want = ref.conv_transpose2d(np.asarray(x, np.float64), np.asarray(w, np.float64), stride, padding,
                                output_padding, (1, 1), groups)
    assert out.shape == want.shape
    assert_close(out, want, "f32", loose=True)


@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_transposed_low_precision(dname, dtype):
    x, w = rand((1, 4, 8, 8), dtype, 4), rand((4, 16, 3, 3), dtype, 5)
    params = {"stride": (2, 2), "padding": (1, 1), "output_padding": (1, 1)}
    out = runner.compile(fused_text("conv_transpose_2d", [x, w], params), "f")(x, w)
    assert out.dtype == dtype
    assert_close(out, transposed_reference(x, w, (2, 2), (1, 1), (1, 1)), dname)
