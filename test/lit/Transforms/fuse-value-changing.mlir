// Flax's LayerNorm computes its variance as max(0, mean(x^2) - mean(x)^2):
// equal to the op's mean((x - mean(x))^2) in exact arithmetic, rounded
// otherwise. --fuel-fuse finds it only under value-changing; without it the
// near-miss report names the option, and the IR is left as it was.
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/layernorm.iree-input.mlir --fuel-fuse \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/layernorm.iree-input.mlir \
// RUN:   --fuel-fuse="value-changing" | FileCheck %s --check-prefix=ON
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/layernorm.iree-input.mlir \
// RUN:   --fuel-fuse="report=near-misses" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REPORT
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/standardize.iree-input.mlir \
// RUN:   --fuel-fuse="value-changing" | FileCheck %s --check-prefix=STANDARDIZE

// DEFAULT-NOT: fuel.fused
// ON: fuel.fused layer_norm_last_dim {eps = 9.99999{{[0-9]+}}E-7 : f64} (%arg0) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// REPORT: remark: fuel-fuse near miss: layer_norm_last_dim: computes it with the variance as max(0, mean(x^2) - mean(x)^2) (Flax's LayerNorm), which rounds otherwise than its definition (fused under --fuel-fuse=value-changing)
// STANDARDIZE: fuel.fused layer_norm_last_dim

// optax's softmax_cross_entropy_with_integer_labels computes logsumexp(x) -
// x[t] (JAX's logsumexp: the max replaced by 0 where it is not finite, |sum|)
// and ignores no target: it reads x[t] through a wrap of negative targets, a
// clamp and a guard, each the identity on the classes (checked on every
// class). Fused under value-changing, the i32 targets widened to the op's
// i64 and the ignore index one no i32 target equals.
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/cross_entropy.iree-input.mlir --fuel-fuse \
// RUN:   | FileCheck %s --check-prefix=CE-DEFAULT
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/cross_entropy.iree-input.mlir \
// RUN:   --fuel-fuse="value-changing" | FileCheck %s --check-prefix=CE-ON
// RUN: fuel-opt %fuel_src/test/corpus/jax_stablehlo/cross_entropy.stablehlo2linalg.mlir \
// RUN:   --inline --fuel-fuse="value-changing" | FileCheck %s --check-prefix=CE-ON
// RUN: fuel-opt %fuel_src/test/corpus/jax_iree/cross_entropy.iree-input.mlir \
// RUN:   --fuel-fuse="report=near-misses" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CE-REPORT

// CE-DEFAULT-NOT: fuel.fused
// CE-ON: %[[T:.*]] = linalg.generic
// CE-ON: arith.extsi %{{.*}} : i32 to i64
// CE-ON: fuel.fused fused_softmax_cross_entropy {ignore_index = -2147483649 : i64} (%arg0, %[[T]]) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
// CE-ON-NEXT: return
// CE-REPORT: remark: fuel-fuse near miss: fused_softmax_cross_entropy: computes it with the loss as logsumexp(x) - x[t], no target ignored (optax's softmax_cross_entropy_with_integer_labels), which rounds otherwise than its definition (fused under --fuel-fuse=value-changing)
