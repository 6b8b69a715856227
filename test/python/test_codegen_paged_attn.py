"""The attention schedule of paged_attn (one scf.forall iteration per
sequence and query head; each live token's key and value rows read as
vectors through the block table, its score a reduction across lanes; the
softmax over the row of scores in vectors) against the numpy reference
(references.paged_attn, in float64): block sizes, grouped query heads, head
dims that are and are not a multiple of 16, empty contexts, contexts longer
than the table holds, softcap and ALiBi, f32/f16/bf16, two threads; and the
compiled code's structure."""

import numpy as np
import pytest

from fuel_mlir import ir, passmanager, runner
import references as ref
from numerics import BF16, assert_close, fused_text, rand

DTYPES = [("f32", np.float32), ("f16", np.float16)]
if BF16 is not None:
    DTYPES.append(("bf16", BF16))


def make(S, Hq, Hkv, D, block_size, max_blocks, lens, dtype, seed=0):
    num_blocks = S * max_blocks + 2
    q = rand((S, Hq, D), dtype, seed)
    kc = rand((num_blocks, Hkv, block_size, D), dtype, seed + 1)
    vc = rand((num_blocks, Hkv, block_size, D), dtype, seed + 2)
    table = np.random.default_rng(seed + 3).permutation(num_blocks)[:S * max_blocks]
    table = table.reshape(S, max_blocks).astype(np.int32)
    return q, kc, vc, table, np.array(lens, np.int32)


def run(args, params, alibi=None, **options):
    operands = list(args) + ([alibi] if alibi is not None else [])
    text = fused_text("paged_attn", operands, params)
    return runner.compile(text, "f", **options)(*operands)


def reference(args, params, alibi=None):
    q, kc, vc, table, lens = args
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    return ref.paged_attn(f64(q), f64(kc), f64(vc), table, lens, params["softmax_scale"],
                          params["block_size"], softcap=params.get("softcap"),
                          alibi=None if alibi is None else f64(alibi))


# (S, Hq, Hkv, D, block_size, max_blocks, lens)
CASES = [(2, 4, 2, 64, 16, 4, [37, 64]),
         (3, 2, 2, 24, 4, 3, [0, 5, 12]),
         (1, 8, 1, 16, 8, 2, [1]),
         (2, 2, 1, 32, 2, 5, [9, 3])]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c[:6])))
@pytest.mark.parametrize("dname,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_scheduled(case, dname, dtype):
    *shape, lens = case
    args = make(*shape, lens, dtype)
    params = {"softmax_scale": 0.125, "block_size": shape[4]}
    got = run(args, params)
    assert_close(got, reference(args, params), dname, loose=True)


def test_softcap_and_alibi():
    args = make(2, 4, 2, 40, 8, 3, [20, 7], np.float32, seed=5)
    alibi = (2.0 ** -np.arange(1, 5)).astype(np.float32)
    params = {"softmax_scale": 0.2, "block_size": 8, "softcap": 3.0}
    assert_close(run(args, params, alibi), reference(args, params, alibi), "f32", loose=True)


def test_empty_and_overlong_contexts():
    # A sequence of no tokens attends nothing: 0. One longer than its table
    # attends the table's tokens, as the decomposition does.
    args = make(2, 2, 2, 16, 4, 2, [0, 100], np.float32, seed=6)
    params = {"softmax_scale": 0.3, "block_size": 4}
    got = run(args, params)
    assert np.all(got[0] == 0)
    capped = list(args[:4]) + [np.array([0, 8], np.int32)]
    assert_close(got, reference(capped, params), "f32", loose=True)


def test_threads_agree():
    args = make(4, 8, 2, 64, 16, 8, [100, 3, 128, 57], np.float32, seed=7)
    params = {"softmax_scale": 0.125, "block_size": 16}
    one, two = run(args, params), run(args, params, threads=2)
    assert np.array_equal(one, two)


def test_structure():
    args = make(2, 4, 2, 64, 16, 4, [37, 64], np.float32)
    params = {"softmax_scale": 0.125, "block_size": 16}
    with ir.Context():
        module = ir.Module.parse(fused_text("paged_attn", list(args), params))
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        out = str(module)
    assert "fuel.fused" not in out and "linalg.generic" not in out
    assert "scf.forall" in out and "vector.reduction <add>" in out
    assert "math.exp %" in out and "vector<16xf32>" in out


def test_dynamic_number_of_sequences():
    # One compiled function for every decode batch (sequences dynamic).
    args = make(3, 4, 2, 32, 8, 3, [5, 24, 1], np.float32, seed=8)
    params = {"softmax_scale": 0.25, "block_size": 8}
    text = fused_text("paged_attn", list(args), params, dynamic={0: (0,), 3: (0,), 4: (0,)})
    assert "tensor<?x4x32x" in text
    f = runner.compile(text, "f")
    q, kc, vc, table, lens = args
    for rows in ([0, 1, 2], [2], [1, 0, 2, 1]):
        call = (q[rows], kc, vc, table[rows], lens[rows])
        assert_close(f(*call), reference(call, params), "f32", loose=True)
    with ir.Context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(fuel-codegen-cpu)").run(module.operation)
        assert "fuel.fused" not in str(module)
