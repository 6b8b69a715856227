// RUN: fuel-opt %s -split-input-file -verify-diagnostics

// Each case breaks one rule of the registry; the diagnostic names the op and
// the rule.

// -----

func.func @unknown_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown fused op 'softmax_first_dim'}}
  %0 = fuel.fused softmax_first_dim (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unknown_id(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown fused op id 99}}
  %0 = "fuel.fused"(%x) {kind = #fuel.kind<99>, params = {}} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unregistered_runtime_id(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown fused op id 32768 (no runtime op has this id)}}
  %0 = "fuel.fused"(%x) {kind = #fuel.kind<32768>, params = {}} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Operand count.
func.func @too_few_operands(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'fuel.fused' op fused_linear: operand count: expects 3 operands, got 2}}
  %0 = fuel.fused fused_linear (%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @too_many_operands(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{conv2d: operand count: expects 2 to 3 operands, got 4}}
  %0 = fuel.fused conv2d (%x, %w, %b, %b) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @optional_of_wrong_kind(%q: tensor<1x2x4x8xf32>, %n: index) {
  // An index where the optional alibi tensor or k_len may stand matches
  // k_len; a second index matches nothing.
  // expected-error @+1 {{flash_attn: operand count: operand #4 of type index matches no optional operand}}
  %0 = fuel.fused flash_attn {softmax_scale = 1.0 : f32} (%q, %q, %q, %n, %n) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, index, index) -> tensor<1x2x4x8xf32>
  return
}

// -----

// Element types.
func.func @int_input(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{softmax_last_dim: operand types: operand 'x' must be a ranked tensor of f16, bf16, f32 or f64 values of rank >= 1, got tensor<4x8xi32>}}
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  return
}

// -----

func.func @targets_not_i64(%l: tensor<4x10xf32>, %t: tensor<4xi32>) {
  // expected-error @+1 {{operand 'targets' must be a ranked tensor of 64-bit integer values, got tensor<4xi32>}}
  %0 = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{operand 'x' must be a ranked tensor}}
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @memref_not_destructive(%x: memref<4x8xf32>) {
  // Only a destroyed operand may be a memref.
  // expected-error @+1 {{softmax_last_dim: operand types: operand 'x' must be a ranked tensor}}
  fuel.fused softmax_last_dim (%x) : (memref<4x8xf32>) -> ()
  return
}

// -----

// Ranks.
func.func @rank_0_softmax(%x: tensor<f32>) {
  // expected-error @+1 {{softmax_last_dim: operand types: operand 'x' must be a ranked tensor of f16, bf16, f32 or f64 values of rank >= 1, got tensor<f32>}}
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @conv_rank(%x: tensor<4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: operand types: operand 'x' must be a ranked tensor of f16, bf16, f32 or f64 values of rank 4, got tensor<4x8x8xf32>}}
  %0 = fuel.fused conv2d (%x, %w) : (tensor<4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<4x8x8xf32>
  return
}

// -----

// Shape rules.
func.func @linear_k_mismatch(%a: tensor<4x8xf32>, %b: tensor<16x32xf32>, %c: tensor<32xf32>) {
  // expected-error @+1 {{fused_linear: shape rule: a dim 1 (8) must equal b dim 0 (16)}}
  %0 = fuel.fused fused_linear (%a, %b, %c) : (tensor<4x8xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @linear_bias_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x32xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{fused_linear: shape rule: bias dim 0 (16) must equal b dim 1 (32)}}
  %0 = fuel.fused fused_linear (%a, %b, %c) : (tensor<4x8xf32>, tensor<8x32xf32>, tensor<16xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @conv_output_size(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // (8 - 3) / 1 + 1 = 6, not 8.
  // expected-error @+1 {{conv2d: result types: result #0 must be 'tensor<1x4x6x6xf32>', got 'tensor<1x4x8x8xf32>'}}
  %0 = fuel.fused conv2d (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x4x2x2xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: shape rule: the kernel (3) is larger than the padded input (2) in spatial dim 0}}
  %0 = fuel.fused conv2d (%x, %w) : (tensor<1x4x2x2xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_groups_divide_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{conv2d: shape rule: groups (3) must divide x dim 1 (4)}}
  %0 = fuel.fused conv2d {groups = 3 : i64} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: shape rule: w dim 1 (4) must equal C / groups (2)}}
  %0 = fuel.fused conv2d {groups = 2 : i64} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{conv_transpose_2d: params rule: output_padding[0] (1) must be smaller than stride or dilation}}
  %0 = fuel.fused conv_transpose_2d {output_padding = array<i64: 1, 0>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x11x10xf32>
  return
}

// -----

func.func @gqa_heads(%q: tensor<1x6x4x8xf32>, %k: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{flash_attn: shape rule: the query heads (6) must be a multiple of the kv heads (4)}}
  %0 = fuel.fused flash_attn {softmax_scale = 1.0 : f32} (%q, %k, %k) : (tensor<1x6x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x6x4x8xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{flash_attn: shape rule: k dim 3 (16) must equal q dim 3 (8)}}
  %0 = fuel.fused flash_attn {softmax_scale = 1.0 : f32} (%q, %k, %k) : (tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @alibi_heads(%q: tensor<1x2x4x8xf32>, %alibi: tensor<3xf32>) {
  // expected-error @+1 {{flash_attn: shape rule: alibi dim 0 (3) must equal q dim 1 (2)}}
  %0 = fuel.fused flash_attn {softmax_scale = 1.0 : f32} (%q, %q, %q, %alibi) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<3xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @paged_block_size(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) {
  // expected-error @+1 {{paged_attn: shape rule: k_cache dim 2 (16) must equal param block_size (32)}}
  %0 = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 32 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return
}

// -----

func.func @quant_block(%a: tensor<4x48xf32>, %w: tensor<54xi32>) {
  // expected-error @+1 {{qmatmul: shape rule: k (48) must be a multiple of the q4_0 block size (32)}}
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 48 : i64, n = 8 : i64} (%a, %w) : (tensor<4x48xf32>, tensor<54xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @quant_stream_size(%a: tensor<4x256xf32>, %w: tensor<100xi32>) {
  // Q6_K: 2 rows of 1 block of 210 bytes = 420 bytes = 105 words.
  // expected-error @+1 {{qmatmul: shape rule: w_q dim 0 (100) must equal the u32 words of N * K / 256 blocks of 210 bytes (105)}}
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q6_k>, k = 256 : i64, n = 2 : i64} (%a, %w) : (tensor<4x256xf32>, tensor<100xi32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @quant_k_param(%a: tensor<4x64xf32>, %w: tensor<72xi32>) {
  // expected-error @+1 {{qmatmul: shape rule: a dim 1 (64) must equal param k (32)}}
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 32 : i64, n = 16 : i64} (%a, %w) : (tensor<4x64xf32>, tensor<72xi32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @nf4_block(%a: tensor<4x96xf32>, %w: tensor<8x48xi8>, %s: tensor<8x2xf32>) {
  // expected-error @+1 {{nf4_matmul: shape rule: block_size (64) must divide K (96)}}
  %0 = fuel.fused nf4_matmul (%a, %w, %s) : (tensor<4x96xf32>, tensor<8x48xi8>, tensor<8x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @awq_group(%a: tensor<4x96xf16>, %qw: tensor<96x2xi32>, %qz: tensor<1x2xi32>, %s: tensor<1x16xf16>) {
  // expected-error @+1 {{awq_matmul: shape rule: group_size (64) must divide K (96)}}
  %0 = fuel.fused awq_matmul {group_size = 64 : i64} (%a, %qw, %qz, %s) : (tensor<4x96xf16>, tensor<96x2xi32>, tensor<1x2xi32>, tensor<1x16xf16>) -> tensor<4x16xf16>
  return
}

// -----

func.func @rope_odd(%x: tensor<2x4x7xf32>, %t: tensor<4x7xf32>) {
  // expected-error @+1 {{rope: shape rule: the rotated dim D (7) must be even}}
  %0 = fuel.fused rope (%x, %t, %t) : (tensor<2x4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<2x4x7xf32>
  return
}

// -----

func.func @backward_shape(%x: tensor<4x8xf32>, %g: tensor<4x9xf32>) {
  // expected-error @+1 {{softmax_last_dim_backward: shape rule: g dim 1 (9) must equal y dim 1 (8)}}
  %0 = fuel.fused softmax_last_dim_backward (%x, %g) : (tensor<4x8xf32>, tensor<4x9xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_max_target(%x: tensor<4x8xf32>, %g: tensor<4x2xf32>) {
  // expected-error @+1 {{reduce_max_to_backward: shape rule: g dim 1 (2) must be 1 (reduced) or equal x dim 1 (8)}}
  %0 = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @cross_entropy_rank(%l: tensor<4x10xf32>, %t: tensor<4x1xi64>) {
  // expected-error @+1 {{fused_softmax_cross_entropy: shape rule: targets must have rank 1 (logits' rank minus the class dim), got 2}}
  %0 = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<f32>
  return
}

// -----

func.func @causal_conv_short(%x: tensor<1x4x2xf32>, %w: tensor<4x1x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{causal_conv1d: shape rule: x's length (2) must be at least the kernel size (4)}}
  %0 = fuel.fused causal_conv1d (%x, %w, %b) : (tensor<1x4x2xf32>, tensor<4x1x4xf32>, tensor<4xf32>) -> tensor<1x4x1xf32>
  return
}

// -----

func.func @scan_state_dim(%u: tensor<2x8x4xf32>, %a: tensor<4x3xf32>, %b: tensor<2x8x5xf32>) {
  // expected-error @+1 {{selective_scan: shape rule: b dim 2 (5) must equal a dim 1 (3)}}
  %0:2 = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<4x3xf32>, tensor<2x8x5xf32>, tensor<2x8x5xf32>) -> (tensor<2x8x4xf32>, tensor<2x4x5xf32>)
  return
}

// -----

// Dtype rules.
func.func @mixed_dtypes(%a: tensor<4x8xf32>, %b: tensor<8x16xf16>, %c: tensor<16xf32>) {
  // expected-error @+1 {{fused_linear: dtype rule: b has element type f16 but a has f32}}
  %0 = fuel.fused fused_linear (%a, %b, %c) : (tensor<4x8xf32>, tensor<8x16xf16>, tensor<16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @result_dtype(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{softmax_last_dim: result types: result #0 must be 'tensor<4x8xf32>', got 'tensor<4x8xf16>'}}
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return
}

// -----

func.func @result_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{softmax_last_dim: result types: expects 1 results, got 2}}
  %0:2 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

// Params schema.
func.func @eps_not_positive(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rms_norm_last_dim: params schema: param 'eps' must be > 0, got -1.000000e+00 : f64}}
  %0 = fuel.fused rms_norm_last_dim {eps = -1.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @eps_zero(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{layer_norm_last_dim: params schema: param 'eps' must be > 0}}
  %0 = fuel.fused layer_norm_last_dim {eps = 0.0 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @eps_nan(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rms_norm_last_dim: params schema: param 'eps' must be finite}}
  %0 = fuel.fused rms_norm_last_dim {eps = 0x7FF0000000000000 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @eps_wrong_kind(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rms_norm_last_dim: params schema: param 'eps' must be an f64 float, got 5.000000e-01 : f32}}
  %0 = fuel.fused rms_norm_last_dim {eps = 0.5 : f32} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @eps_missing(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rms_norm_last_dim: params schema: missing required param 'eps' (an f64 float)}}
  %0 = fuel.fused rms_norm_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @unknown_param(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rms_norm_last_dim: params schema: unknown param 'epsilon' (params: eps)}}
  %0 = fuel.fused rms_norm_last_dim {epsilon = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @param_on_paramless_op(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{softmax_last_dim: params schema: unknown param 'dim' (the op has no params)}}
  %0 = fuel.fused softmax_last_dim {dim = 1 : i64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @groups_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: params schema: param 'groups' must be >= 1, got 0 : i64}}
  %0 = fuel.fused conv2d {groups = 0 : i64} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @stride_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: params schema: param 'stride' must be a pair of values >= 1, got array<i64: 0, 1>}}
  %0 = fuel.fused conv2d {stride = array<i64: 0, 1>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @stride_not_pair(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: params schema: param 'stride' must be a pair array<i64: a, b>, got array<i64: 1, 1, 1>}}
  %0 = fuel.fused conv2d {stride = array<i64: 1, 1, 1>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @chunk_divides_seq(%x: tensor<1x6x2x4xf32>, %dt: tensor<1x6x2xf32>, %a: tensor<2xf32>, %b: tensor<1x6x2x3xf32>) {
  // expected-error @+1 {{ssd_chunk_scan: params rule: chunk_size (4) must divide the sequence length L (6)}}
  %0 = fuel.fused ssd_chunk_scan {chunk_size = 4 : i64} (%x, %dt, %a, %b, %b) : (tensor<1x6x2x4xf32>, tensor<1x6x2xf32>, tensor<2xf32>, tensor<1x6x2x3xf32>, tensor<1x6x2x3xf32>) -> tensor<1x6x2x4xf32>
  return
}

// -----

func.func @unknown_quant_type(%a: tensor<4x64xf32>, %w: tensor<72xi32>) {
  // expected-error @+2 {{expected ::mlir::fuel::QuantType to be one of: q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_k, q3_k, q4_k, q5_k, q6_k}}
  // expected-error @+1 {{failed to parse Fuel_QuantTypeAttr parameter 'value'}}
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q3_0>, k = 64 : i64, n = 8 : i64} (%a, %w) : (tensor<4x64xf32>, tensor<72xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @quant_type_as_string(%a: tensor<4x64xf32>, %w: tensor<72xi32>) {
  // expected-error @+1 {{qmatmul: params schema: param 'quant_type' must be a #fuel.quant<...> GGML quant type, got "q4_0"}}
  %0 = fuel.fused qmatmul {quant_type = "q4_0", k = 64 : i64, n = 8 : i64} (%a, %w) : (tensor<4x64xf32>, tensor<72xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @group_size_not_64_or_128(%a: tensor<4x96xf16>, %qw: tensor<96x2xi32>, %qz: tensor<3x2xi32>, %s: tensor<3x16xf16>) {
  // expected-error @+1 {{awq_matmul: params schema: param 'group_size' must be 64 or 128, got 32 : i64}}
  %0 = fuel.fused awq_matmul {group_size = 32 : i64} (%a, %qw, %qz, %s) : (tensor<4x96xf16>, tensor<96x2xi32>, tensor<3x2xi32>, tensor<3x16xf16>) -> tensor<4x16xf16>
  return
}

// -----

func.func @window_negative(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{flash_attn: params schema: param 'window_size_left' must be >= 0, got -1 : i64}}
  %0 = fuel.fused flash_attn {softmax_scale = 1.0 : f32, window_size_left = -1 : i64} (%q, %q, %q) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @reduction_wrong_kind(%l: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{fused_softmax_cross_entropy: params schema: param 'reduction' must be a #fuel.reduction<mean|sum|none>, got "mean"}}
  %0 = fuel.fused fused_softmax_cross_entropy {reduction = "mean"} (%l, %t) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @params_not_dict(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fuel.fused' op attribute 'params' failed to satisfy constraint: dictionary of named attribute values}}
  %0 = "fuel.fused"(%x) {kind = #fuel.kind<softmax_last_dim>, params = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Sizes that do not fit in 64 bits are errors, not wrapped values.
func.func @quant_stream_overflow(%a: tensor<4x?xf32>, %w: tensor<?xi32>) {
  // expected-error @+1 {{qmatmul: shape rule: the u32 words of N * K / 32 blocks of 18 bytes overflows 64 bits}}
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 4611686018427387904 : i64, n = 4 : i64} (%a, %w) : (tensor<4x?xf32>, tensor<?xi32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @conv_padding_overflow(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: shape rule: the padding overflows 64 bits}}
  %0 = fuel.fused conv2d {padding = array<i64: 4611686018427387904, 0>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x6xf32>
  return
}

// -----

func.func @conv_transpose_overflow(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{conv_transpose_2d: shape rule: the output size in spatial dim 0 overflows 64 bits}}
  %0 = fuel.fused conv_transpose_2d {stride = array<i64: 2305843009213693952, 1>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x10xf32>
  return
}
