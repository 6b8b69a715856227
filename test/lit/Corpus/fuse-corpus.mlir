// RUN: %PYTHON %S/Inputs/fuse_corpus.py fuel-opt %fuel_src/test/corpus | FileCheck %s

// What --fuel-fuse finds in the frontend exports of test/corpus (torch-mlir
// and TOSA lowered to linalg, JAX through StableHLO by torch-mlir's and
// IREE's routes, ONNX through torch-mlir's and IREE's; see test/corpus/README.md), as
// exported and
// after upstream elementwise fusion: the README's list for every model.
// (decompose(fuse(f)) == f on random inputs: test/python/test_fuse_corpus.py.)

// CHECK: jax_iree/conv2d.iree-input.mlir as-exported: conv2d=1
// CHECK-NEXT: jax_iree/conv2d.iree-input.mlir elementwise-fused: conv2d=1
// CHECK-NEXT: jax_iree/cross_entropy.iree-input.mlir as-exported: none
// CHECK-NEXT: jax_iree/cross_entropy.iree-input.mlir elementwise-fused: none
// CHECK-NEXT: jax_iree/einsum_attention.iree-input.mlir as-exported: flash_attn=1
// CHECK-NEXT: jax_iree/einsum_attention.iree-input.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: jax_iree/layernorm.iree-input.mlir as-exported: none
// CHECK-NEXT: jax_iree/layernorm.iree-input.mlir elementwise-fused: none
// CHECK-NEXT: jax_iree/linear.iree-input.mlir as-exported: fused_linear=1
// CHECK-NEXT: jax_iree/linear.iree-input.mlir elementwise-fused: fused_linear=1
// CHECK-NEXT: jax_iree/rmsnorm.iree-input.mlir as-exported: rms_norm_last_dim=1
// CHECK-NEXT: jax_iree/rmsnorm.iree-input.mlir elementwise-fused: rms_norm_last_dim=1
// CHECK-NEXT: jax_iree/rope.iree-input.mlir as-exported: rope=1
// CHECK-NEXT: jax_iree/rope.iree-input.mlir elementwise-fused: rope=1
// CHECK-NEXT: jax_iree/sdpa.iree-input.mlir as-exported: flash_attn=1
// CHECK-NEXT: jax_iree/sdpa.iree-input.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: jax_iree/sdpa_causal.iree-input.mlir as-exported: flash_attn=1
// CHECK-NEXT: jax_iree/sdpa_causal.iree-input.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: jax_iree/softmax.iree-input.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: jax_iree/softmax.iree-input.mlir elementwise-fused: softmax_last_dim=1
// CHECK-NEXT: jax_iree/standardize.iree-input.mlir as-exported: none
// CHECK-NEXT: jax_iree/standardize.iree-input.mlir elementwise-fused: none
// CHECK-NEXT: jax_stablehlo/conv2d.stablehlo2linalg.mlir as-exported: conv2d=1
// CHECK-NEXT: jax_stablehlo/conv2d.stablehlo2linalg.mlir elementwise-fused: conv2d=1
// CHECK-NEXT: jax_stablehlo/cross_entropy.stablehlo2linalg.mlir as-exported: none
// CHECK-NEXT: jax_stablehlo/cross_entropy.stablehlo2linalg.mlir elementwise-fused: none
// CHECK-NEXT: jax_stablehlo/einsum_attention.stablehlo2linalg.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/einsum_attention.stablehlo2linalg.mlir elementwise-fused: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/layernorm.stablehlo2linalg.mlir as-exported: none
// CHECK-NEXT: jax_stablehlo/layernorm.stablehlo2linalg.mlir elementwise-fused: none
// CHECK-NEXT: jax_stablehlo/linear.stablehlo2linalg.mlir as-exported: fused_linear=1
// CHECK-NEXT: jax_stablehlo/linear.stablehlo2linalg.mlir elementwise-fused: fused_linear=1
// CHECK-NEXT: jax_stablehlo/rmsnorm.stablehlo2linalg.mlir as-exported: rms_norm_last_dim=1
// CHECK-NEXT: jax_stablehlo/rmsnorm.stablehlo2linalg.mlir elementwise-fused: rms_norm_last_dim=1
// CHECK-NEXT: jax_stablehlo/rope.stablehlo2linalg.mlir as-exported: rope=1
// CHECK-NEXT: jax_stablehlo/rope.stablehlo2linalg.mlir elementwise-fused: rope=1
// CHECK-NEXT: jax_stablehlo/sdpa.stablehlo2linalg.mlir as-exported: flash_attn=1
// CHECK-NEXT: jax_stablehlo/sdpa.stablehlo2linalg.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: jax_stablehlo/sdpa_causal.stablehlo2linalg.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/sdpa_causal.stablehlo2linalg.mlir elementwise-fused: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/softmax.stablehlo2linalg.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/softmax.stablehlo2linalg.mlir elementwise-fused: softmax_last_dim=1
// CHECK-NEXT: jax_stablehlo/standardize.stablehlo2linalg.mlir as-exported: none
// CHECK-NEXT: jax_stablehlo/standardize.stablehlo2linalg.mlir elementwise-fused: none
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_ignore.iree-input.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_ignore.iree-input.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_mean.iree-input.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_mean.iree-input.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_none.iree-input.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_none.iree-input.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_sum.iree-input.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_iree/softmax_cross_entropy_sum.iree-input.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_ignore.linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_ignore.linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_mean.linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_mean.linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_none.linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_none.linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_sum.linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: onnx_torch_mlir/softmax_cross_entropy_sum.linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: torch_mlir/conv2d.linalg.mlir as-exported: conv2d=1
// CHECK-NEXT: torch_mlir/conv2d.linalg.mlir elementwise-fused: conv2d=1
// CHECK-NEXT: torch_mlir/cross_entropy.linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: torch_mlir/cross_entropy.linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: torch_mlir/gelu.linalg.mlir as-exported: none
// CHECK-NEXT: torch_mlir/gelu.linalg.mlir elementwise-fused: none
// CHECK-NEXT: torch_mlir/gelu_tanh.linalg.mlir as-exported: none
// CHECK-NEXT: torch_mlir/gelu_tanh.linalg.mlir elementwise-fused: none
// CHECK-NEXT: torch_mlir/layernorm.linalg.mlir as-exported: layer_norm_last_dim=1
// CHECK-NEXT: torch_mlir/layernorm.linalg.mlir elementwise-fused: layer_norm_last_dim=1
// CHECK-NEXT: torch_mlir/linear.linalg.mlir as-exported: fused_linear=1
// CHECK-NEXT: torch_mlir/linear.linalg.mlir elementwise-fused: fused_linear=1
// CHECK-NEXT: torch_mlir/llama_block.linalg.elided.mlir as-exported: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: torch_mlir/llama_block.linalg.elided.mlir elementwise-fused: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: torch_mlir/llama_block_sdpa.linalg.elided.mlir as-exported: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: torch_mlir/llama_block_sdpa.linalg.elided.mlir elementwise-fused: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: torch_mlir/rmsnorm.linalg.mlir as-exported: rms_norm_last_dim=1
// CHECK-NEXT: torch_mlir/rmsnorm.linalg.mlir elementwise-fused: rms_norm_last_dim=1
// CHECK-NEXT: torch_mlir/sdpa.linalg.mlir as-exported: flash_attn=1
// CHECK-NEXT: torch_mlir/sdpa.linalg.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: torch_mlir/sdpa_causal.linalg.mlir as-exported: flash_attn=1
// CHECK-NEXT: torch_mlir/sdpa_causal.linalg.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: torch_mlir/silu.linalg.mlir as-exported: none
// CHECK-NEXT: torch_mlir/silu.linalg.mlir elementwise-fused: none
// CHECK-NEXT: torch_mlir/softmax.linalg.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: torch_mlir/softmax.linalg.mlir elementwise-fused: softmax_last_dim=1
// CHECK-NEXT: tosa_to_linalg/conv2d.tosa2linalg.mlir as-exported: conv2d=1
// CHECK-NEXT: tosa_to_linalg/conv2d.tosa2linalg.mlir elementwise-fused: conv2d=1
// CHECK-NEXT: tosa_to_linalg/cross_entropy.tosa2linalg.mlir as-exported: fused_softmax_cross_entropy=1
// CHECK-NEXT: tosa_to_linalg/cross_entropy.tosa2linalg.mlir elementwise-fused: fused_softmax_cross_entropy=1
// CHECK-NEXT: tosa_to_linalg/gelu.tosa2linalg.mlir as-exported: none
// CHECK-NEXT: tosa_to_linalg/gelu.tosa2linalg.mlir elementwise-fused: none
// CHECK-NEXT: tosa_to_linalg/gelu_tanh.tosa2linalg.mlir as-exported: none
// CHECK-NEXT: tosa_to_linalg/gelu_tanh.tosa2linalg.mlir elementwise-fused: none
// CHECK-NEXT: tosa_to_linalg/layernorm.tosa2linalg.mlir as-exported: layer_norm_last_dim=1
// CHECK-NEXT: tosa_to_linalg/layernorm.tosa2linalg.mlir elementwise-fused: layer_norm_last_dim=1
// CHECK-NEXT: tosa_to_linalg/linear.tosa2linalg.mlir as-exported: fused_linear=1
// CHECK-NEXT: tosa_to_linalg/linear.tosa2linalg.mlir elementwise-fused: fused_linear=1
// CHECK-NEXT: tosa_to_linalg/llama_block.tosa2linalg.elided.mlir as-exported: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: tosa_to_linalg/llama_block.tosa2linalg.elided.mlir elementwise-fused: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: tosa_to_linalg/llama_block_sdpa.tosa2linalg.elided.mlir as-exported: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: tosa_to_linalg/llama_block_sdpa.tosa2linalg.elided.mlir elementwise-fused: flash_attn=1 rms_norm_last_dim=2 rope=2
// CHECK-NEXT: tosa_to_linalg/rmsnorm.tosa2linalg.mlir as-exported: rms_norm_last_dim=1
// CHECK-NEXT: tosa_to_linalg/rmsnorm.tosa2linalg.mlir elementwise-fused: rms_norm_last_dim=1
// CHECK-NEXT: tosa_to_linalg/sdpa.tosa2linalg.mlir as-exported: flash_attn=1
// CHECK-NEXT: tosa_to_linalg/sdpa.tosa2linalg.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: tosa_to_linalg/sdpa_causal.tosa2linalg.mlir as-exported: flash_attn=1
// CHECK-NEXT: tosa_to_linalg/sdpa_causal.tosa2linalg.mlir elementwise-fused: flash_attn=1
// CHECK-NEXT: tosa_to_linalg/silu.tosa2linalg.mlir as-exported: none
// CHECK-NEXT: tosa_to_linalg/silu.tosa2linalg.mlir elementwise-fused: none
// CHECK-NEXT: tosa_to_linalg/softmax.tosa2linalg.mlir as-exported: softmax_last_dim=1
// CHECK-NEXT: tosa_to_linalg/softmax.tosa2linalg.mlir elementwise-fused: softmax_last_dim=1
