"""Makes the JAX exports of test/corpus: small models written as JAX, Flax
and optax users write them, lowered to StableHLO with
`jax.jit(f).lower(...).as_text()`, then to linalg by two routes:

- `jax_stablehlo/*.stablehlo2linalg.mlir`: torch-mlir's
  `torch-mlir-opt --stablehlo-legalize-to-linalg` (torch-mlir-opt has no
  CHLO lowering: `chlo.square x`, which `lax.square` emits, is written as
  `stablehlo.multiply x, x` first, its definition);
- `jax_iree/*.iree-input.mlir`: `iree-compile --iree-input-type=stablehlo
  --compile-to=input`, with IREE's `util.func`/`util.return` written as
  `func.func`/`return` (fuel-opt does not register IREE's dialects; the
  bodies are unchanged).

The tools are not dependencies of the package: install them beside it to
run this script (`pip install jax==0.10.2 jaxlib==0.10.2 torch-mlir
iree-base-compiler`) and give their location, e.g.

    python test/corpus/make_jax.py --tools /path/to/venv/bin

Flax's and optax's code is written out below as those libraries write it
(flax.linen.RMSNorm and LayerNorm, optax's
softmax_cross_entropy_with_integer_labels), so that neither is needed.
"""

import argparse
import pathlib
import re
import subprocess

import jax
import jax.numpy as jnp
from jax import lax

HERE = pathlib.Path(__file__).resolve().parent
EPS = 1e-6


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def rms_norm(x, scale):
    # flax.linen.RMSNorm: x * rsqrt(mean(x^2) + eps), times the scale.
    mean2 = jnp.mean(lax.square(x), axis=-1, keepdims=True)
    return x * lax.rsqrt(mean2 + EPS) * scale


def layer_norm(x, scale, bias):
    # flax.linen.LayerNorm: the variance as mean(x^2) - mean(x)^2, clamped
    # at 0.
    mean = jnp.mean(x, axis=-1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), axis=-1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - lax.square(mean))
    y = (x - mean) * lax.rsqrt(var + EPS)
    return y * scale + bias


def standardize(x):
    return jax.nn.standardize(x, axis=-1, epsilon=EPS)


def sdpa(q, k, v):
    # [B, T, N, H], as jax.nn.dot_product_attention takes it.
    return jax.nn.dot_product_attention(q, k, v)


def sdpa_causal(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)


def einsum_attention(q, k, v):
    # [B, N, T, H], the mask applied with `where`.
    t = q.shape[2]
    scores = jnp.einsum("bnqh,bnkh->bnqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    scores = jnp.where(mask, scores, jnp.finfo(q.dtype).min)
    return jnp.einsum("bnqk,bnkh->bnqh", jax.nn.softmax(scores, axis=-1), v)


def rope(x, cos, sin):
    # rotate_half written with slices, a negation and concatenate.
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    rotated = jnp.concatenate([-x2, x1], axis=-1)
    return x * cos + rotated * sin


def cross_entropy(logits, labels):
    # optax.softmax_cross_entropy_with_integer_labels, then the mean.
    label_logits = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    log_normalizers = jax.nn.logsumexp(logits, axis=-1)
    return jnp.mean(log_normalizers - label_logits)


def linear(x, w, b):
    return x @ w + b


def conv2d(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


MODELS = {
    "softmax": (softmax, [f32(2, 16, 64)]),
    "rmsnorm": (rms_norm, [f32(2, 16, 64), f32(64)]),
    "layernorm": (layer_norm, [f32(2, 16, 64), f32(64), f32(64)]),
    "standardize": (standardize, [f32(2, 16, 64)]),
    "sdpa": (sdpa, [f32(1, 16, 4, 16)] * 3),
    "sdpa_causal": (sdpa_causal, [f32(1, 16, 4, 16)] * 3),
    "einsum_attention": (einsum_attention, [f32(1, 4, 16, 16)] * 3),
    "rope": (rope, [f32(2, 4, 16, 16), f32(16, 16), f32(16, 16)]),
    "cross_entropy": (cross_entropy, [f32(8, 10), jax.ShapeDtypeStruct((8,), jnp.int32)]),
    "linear": (linear, [f32(16, 64), f32(64, 32), f32(32)]),
    "conv2d": (conv2d, [f32(1, 3, 16, 16), f32(8, 3, 3, 3)]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", required=True, type=pathlib.Path,
                        help="the folder holding torch-mlir-opt and iree-compile")
    args = parser.parse_args()
    stablehlo_dir, iree_dir = HERE / "jax_stablehlo", HERE / "jax_iree"
    stablehlo_dir.mkdir(exist_ok=True)
    iree_dir.mkdir(exist_ok=True)
    for name, (fn, shapes) in MODELS.items():
        text = jax.jit(fn).lower(*shapes).as_text()
        squared = re.sub(
            r"(%[\w#]+) = chlo\.square (%[\w#]+) : (tensor<[^>]*>) -> tensor<[^>]*>",
            r"\1 = stablehlo.multiply \2, \2 : \3", text)
        assert "chlo." not in squared, f"{name}: a CHLO op torch-mlir-opt cannot lower"
        linalg = subprocess.run(
            [str(args.tools / "torch-mlir-opt"), "--stablehlo-legalize-to-linalg"],
            input=squared, capture_output=True, text=True, check=True).stdout
        (stablehlo_dir / f"{name}.stablehlo2linalg.mlir").write_text(linalg)
        iree = subprocess.run(
            [str(args.tools / "iree-compile"), "--iree-input-type=stablehlo",
             "--compile-to=input", "-"],
            input=text, capture_output=True, text=True, check=True).stdout
        iree = re.sub(r"\butil\.func\b", "func.func", iree)
        iree = re.sub(r"\butil\.return\b", "return", iree)
        (iree_dir / f"{name}.iree-input.mlir").write_text(iree)
        print(name)


if __name__ == "__main__":
    main()
