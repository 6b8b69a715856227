"""The scan schedule of selective_scan (channels in vector lanes, the state
in registers along the sequence, an scf.forall over batches and channel
vectors; channels that are not a multiple of 16 padded) against the numpy
sequential scan (references.selective_scan, in float64): both results
(y and the last state), with and without softplus, states of 1 to 64,
channels below, at and past a vector, f32/f16/bf16, two threads; the
compiled code's structure; and what the schedule leaves to the
decomposition."""

import numpy as np
import pytest

from fuel_mlir import ir, passmanager, runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))


def make(b, l, d, n, dtype, seed=0):
    u = rand((b, l, d), dtype, seed)
    delta = (np.abs(rand((b, l, d), np.float32, seed + 1)) * 0.5).astype(dtype)
    a = (-np.abs(rand((d, n), np.float32, seed + 2))).astype(dtype)
    bm = rand((b, l, n), dtype, seed + 3)
    cm = rand((b, l, n), dtype, seed + 4)
    return [u, delta, a, bm, cm]


def compiled(args, softplus, **options):
    text = fused_text("selective_scan", args, {"delta_softplus": softplus})
    return runner.compile(text, "f", **options)


def reference(args, softplus):
    return ref.selective_scan(*[np.asarray(a, np.float64) for a in args], softplus)


# (batches, length, channels, state)
SHAPES = [(1, 8, 16, 4), (2, 13, 32, 16), (1, 5, 3, 2), (2, 7, 20, 1), (1, 9, 48, 64)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("softplus", [False, True])
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_scheduled(shape, softplus, dname, dtype):
    args = make(*shape, dtype)
    y, state = compiled(args, softplus)(*args)
    want_y, want_state = reference(args, softplus)
    assert y.shape == want_y.shape and state.shape == want_state.shape
    # A recurrence of L steps: the looser class.
    assert_close(y, want_y, dname, loose=True)
    assert_close(state, want_state, dname, loose=True)


def test_large_delta_takes_softplus_threshold():
    # dt > 20 is taken as it is (softplus(x) = x to f32 precision there).
    args = make(1, 6, 16, 4, np.float32, seed=5)
    args[1] = args[1] + 25.0
    y, state = compiled(args, True)(*args)
    want_y, want_state = reference(args, True)
    assert_close(y, want_y, "f32", loose=True)
    assert_close(state, want_state, "f32", loose=True)


def test_threads_agree():
    args = make(2, 64, 64, 16, np.float32, seed=3)
    one = compiled(args, True)(*args)
    two = compiled(args, True, threads=2)(*args)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))


def lowered(args, softplus):
    text = fused_text("selective_scan", args, {"delta_softplus": softplus})
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        return str(module)


def test_state_in_registers():
    out = lowered(make(1, 8, 32, 16, np.float32), True)
    assert "fuel.fused" not in out
    assert "scf.forall" in out and "vector<16x16xf32>" in out
    assert out.count("math.exp") >= 16


def test_left_to_the_decomposition():
    # A state larger than 128 vectors stays fused for fuel-decompose, and
    # runs as decomposed.
    args = make(1, 3, 4, 130, np.float32, seed=7)
    assert "fuel.fused" in lowered(args, False)
    y, state = compiled(args, False)(*args)
    want_y, want_state = reference(args, False)
    assert_close(y, want_y, "f32", loose=True)
    assert_close(state, want_state, "f32", loose=True)


# Batches and the sequence dynamic (one compiled function for every batch
# and length), channels a multiple of 16 and not.
@pytest.mark.parametrize("d", [32, 20])
def test_dynamic_batch_and_sequence(d):
    args = make(2, 6, d, 8, np.float32)
    text = fused_text("selective_scan", args, {"delta_softplus": True},
                      dynamic={0: (0, 1), 1: (0, 1), 3: (0, 1), 4: (0, 1)})
    assert "tensor<?x?x" in text
    f = runner.compile(text, "f")
    for b, l in [(2, 6), (1, 13), (3, 1)]:
        call = make(b, l, d, 8, np.float32, seed=b + l)
        call[2] = args[2]
        y, state = f(*call)
        want_y, want_state = reference(call, True)
        assert_close(y, want_y, "f32", loose=True)
        assert_close(state, want_state, "f32", loose=True)


# ssd_chunk_scan (Mamba-2's SSD): a head's P channels in the lanes, N state
# vectors along the sequence, against the numpy sequential scan
# (references.ssd_scan, in float64); P below, at and past a vector, states
# of 1 to 128 (past the register file: spilled), chunk sizes that change
# nothing, f32/f16/bf16, dynamic batches and sequence.
def make_ssd(b, l, h, p, n, dtype, seed=0):
    x = rand((b, l, h, p), dtype, seed)
    dt = (np.abs(rand((b, l, h), np.float32, seed + 1)) * 0.5).astype(dtype)
    a = (-np.abs(rand((h,), np.float32, seed + 2))).astype(dtype)
    bm = rand((b, l, h, n), dtype, seed + 3)
    cm = rand((b, l, h, n), dtype, seed + 4)
    return [x, dt, a, bm, cm]


def ssd_reference(args):
    return ref.ssd_scan(*[np.asarray(a, np.float64) for a in args])


# (batches, length, heads, head dim P, state N, chunk size)
SSD_SHAPES = [(1, 8, 2, 16, 4, 8), (2, 12, 3, 64, 16, 4), (1, 5, 1, 3, 2, 5),
              (2, 6, 2, 20, 1, 1), (1, 4, 2, 32, 128, 2)]


@pytest.mark.parametrize("shape", SSD_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_ssd_scheduled(shape, dname, dtype):
    *dims, chunk = shape
    args = make_ssd(*dims, dtype)
    text = fused_text("ssd_chunk_scan", args, {"chunk_size": chunk})
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        assert "fuel.fused" not in str(module) and "scf.forall" in str(module)
    y = runner.compile(text, "f")(*args)
    want = ssd_reference(args)
    assert y.shape == want.shape and y.dtype == dtype
    assert_close(y, want, dname, loose=True)


def test_ssd_dynamic_batch_and_sequence():
    args = make_ssd(2, 6, 2, 20, 8, np.float32)
    text = fused_text("ssd_chunk_scan", args, {"chunk_size": 1},
                      dynamic={0: (0, 1), 1: (0, 1), 3: (0, 1), 4: (0, 1)})
    assert "tensor<?x?x" in text
    f = runner.compile(text, "f")
    for b, l in [(2, 6), (1, 13), (3, 1)]:
        call = make_ssd(b, l, 2, 20, 8, np.float32, seed=b + l)
        call[2] = args[2]
        assert_close(f(*call), ssd_reference(call), "f32", loose=True)


def test_ssd_threads_agree():
    args = make_ssd(2, 32, 4, 64, 16, np.float32, seed=3)
    text = fused_text("ssd_chunk_scan", args, {"chunk_size": 8})
    one = runner.compile(text, "f")(*args)
    two = runner.compile(text, "f", threads=2)(*args)
    assert np.array_equal(one, two)


def test_ssd_left_to_the_decomposition():
    # A state of more than 128 vectors stays fused and runs as decomposed.
    args = make_ssd(1, 3, 1, 16, 130, np.float32, seed=7)
    text = fused_text("ssd_chunk_scan", args, {"chunk_size": 1})
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        assert "fuel.fused" in str(module)
    assert_close(runner.compile(text, "f")(*args), ssd_reference(args), "f32", loose=True)
