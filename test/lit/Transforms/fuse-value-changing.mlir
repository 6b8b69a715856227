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
