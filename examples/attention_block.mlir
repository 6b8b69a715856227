// A small attention block written with fused ops: RMS norm, RoPE, flash
// attention (grouped-query, causal) and a fused output projection.
//
//   fuel-opt examples/attention_block.mlir --cse
func.func @attention_block(%x: tensor<1x16x64xf32>, %q: tensor<1x8x16x8xf32>,
                           %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>,
                           %cos: tensor<16x8xf32>, %sin: tensor<16x8xf32>,
                           %wo: tensor<64x64xf32>, %bo: tensor<64xf32>)
    -> tensor<1x16x64xf32> {
  %xn = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x)
      : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %qr = fuel.fused rope (%q, %cos, %sin)
      : (tensor<1x8x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x8x16x8xf32>
  %kr = fuel.fused rope (%k, %cos, %sin)
      : (tensor<1x2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x2x16x8xf32>
  // The same RoPE twice: CSE keeps one.
  %kr2 = fuel.fused rope (%k, %cos, %sin)
      : (tensor<1x2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x2x16x8xf32>
  %o = fuel.fused flash_attn {causal = true, softmax_scale = 0.35355339 : f32} (%qr, %kr2, %v)
      : (tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32>
  %t = tensor.empty() : tensor<1x16x8x8xf32>
  %ot = linalg.transpose ins(%o : tensor<1x8x16x8xf32>) outs(%t : tensor<1x16x8x8xf32>)
      permutation = [0, 2, 1, 3]
  %flat = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<1x16x8x8xf32> into tensor<1x16x64xf32>
  %y = fuel.fused fused_linear (%flat, %wo, %bo)
      : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  %r = arith.addf %xn, %y : tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}
