// RUN: fuel-opt %s | fuel-opt | FileCheck %s
// RUN: fuel-opt %s --mlir-print-op-generic | fuel-opt | FileCheck %s
// RUN: fuel-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: fuel-opt %s -canonicalize="test-convergence" -o /dev/null

// Every op of the registry, printed, parsed and printed again, in the custom
// and the generic form.

// CHECK-LABEL: func @norms
// GENERIC-LABEL: "func.func"
func.func @norms(%x: tensor<4x64xf32>, %g: tensor<4x64xf32>, %h: tensor<2x?x8xbf16>) {
  // CHECK: fuel.fused softmax_last_dim (%{{.*}}) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  // GENERIC: "fuel.fused"(%{{.*}}) {kind = #fuel.kind<softmax_last_dim>, params = {}} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: fuel.fused rms_norm_last_dim {eps = 1.000000e-05 : f64} (%{{.*}}) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  // GENERIC: {kind = #fuel.kind<rms_norm_last_dim>, params = {eps = 1.000000e-05 : f64}}
  %1 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: fuel.fused layer_norm_last_dim {eps = 9.9999999999999995E-7 : f64} (%{{.*}}) : (tensor<2x?x8xbf16>) -> tensor<2x?x8xbf16>
  %2 = fuel.fused layer_norm_last_dim {eps = 1.0e-06 : f64} (%h) : (tensor<2x?x8xbf16>) -> tensor<2x?x8xbf16>
  // CHECK: fuel.fused softmax_last_dim_backward (%{{.*}}, %{{.*}}) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %3 = fuel.fused softmax_last_dim_backward (%x, %g) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: fuel.fused layer_norm_last_dim_backward {eps = 1.000000e-05 : f64}
  %4 = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: fuel.fused rms_norm_last_dim_backward {eps = 1.000000e-05 : f64}
  %5 = fuel.fused rms_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: fuel.fused powi_backward {exp = 3 : i32}
  %6 = fuel.fused powi_backward {exp = 3 : i32} (%x, %g) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return
}

// CHECK-LABEL: func @linear_rope_reduce
func.func @linear_rope_reduce(%a: tensor<2x8x16xf16>, %b: tensor<16x32xf16>, %bias: tensor<32xf16>,
                              %x: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>,
                              %m: tensor<4x1x16xf32>, %mx: tensor<4x6x16xf32>) {
  // CHECK: fuel.fused fused_linear (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x8x16xf16>, tensor<16x32xf16>, tensor<32xf16>) -> tensor<2x8x32xf16>
  %0 = fuel.fused fused_linear (%a, %b, %bias) : (tensor<2x8x16xf16>, tensor<16x32xf16>, tensor<32xf16>) -> tensor<2x8x32xf16>
  // CHECK: fuel.fused rope (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  %1 = fuel.fused rope (%x, %cos, %sin) : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: fuel.fused reduce_max_to_backward (%{{.*}}, %{{.*}}) : (tensor<4x6x16xf32>, tensor<4x1x16xf32>) -> tensor<4x6x16xf32>
  %2 = fuel.fused reduce_max_to_backward (%mx, %m) : (tensor<4x6x16xf32>, tensor<4x1x16xf32>) -> tensor<4x6x16xf32>
  return
}

// CHECK-LABEL: func @convs
func.func @convs(%x: tensor<2x4x10x10xf32>, %w: tensor<8x2x3x3xf32>, %bias: tensor<8xf32>,
                 %wt: tensor<4x3x3x3xf32>, %cx: tensor<2x6x13xf32>, %cw: tensor<6x1x4xf32>,
                 %cb: tensor<6xf32>) {
  // Default params are omitted in the canonical form.
  // CHECK: fuel.fused conv2d {groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  %0 = fuel.fused conv2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 2 : i64} (%x, %w, %bias) : (tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: fuel.fused conv2d {groups = 2 : i64} (%{{.*}}, %{{.*}}) : (tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x8x8xf32>
  %1 = fuel.fused conv2d {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, groups = 2 : i64} (%x, %w) : (tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x8x8xf32>
  // Ho = (10 - 1) * 2 - 2 * 1 + 1 * (3 - 1) + 1 + 1 = 20.
  // CHECK: fuel.fused conv_transpose_2d {output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} (%{{.*}}, %{{.*}}) : (tensor<2x4x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x20x20xf32>
  %2 = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} (%x, %wt) : (tensor<2x4x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x20x20xf32>
  // CHECK: fuel.fused causal_conv1d {use_silu = true} (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x6x13xf32>, tensor<6x1x4xf32>, tensor<6xf32>) -> tensor<2x6x10xf32>
  %3 = fuel.fused causal_conv1d {use_silu = true} (%cx, %cw, %cb) : (tensor<2x6x13xf32>, tensor<6x1x4xf32>, tensor<6xf32>) -> tensor<2x6x10xf32>
  return
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<1x8x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>,
                     %do: tensor<1x8x16x64xf16>, %alibi: tensor<8xf32>, %n: index,
                     %pq: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %vc: tensor<10x2x16x64xf32>,
                     %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) {
  // CHECK: fuel.fused flash_attn {causal = true, softcap = 3.000000e+01 : f32, softmax_scale = 1.250000e-01 : f32, window_size_left = 4 : i64} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<8xf32>, index) -> tensor<1x8x16x64xf16>
  %0 = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true, window_size_left = 4 : i64, softcap = 30.0 : f32} (%q, %k, %v, %alibi, %n) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<8xf32>, index) -> tensor<1x8x16x64xf16>
  // k_len without alibi: the optional operand is matched by kind.
  // CHECK: fuel.fused flash_attn {softmax_scale = 1.250000e-01 : f32} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, index)
  %1 = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = false} (%q, %k, %v, %n) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, index) -> tensor<1x8x16x64xf16>
  // CHECK: fuel.fused flash_attn_backward_q {softmax_scale = 1.250000e-01 : f32} {{.*}} -> tensor<1x8x16x64xf16>
  %2 = fuel.fused flash_attn_backward_q {softmax_scale = 0.125 : f32} (%q, %k, %v, %do) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16>
  // CHECK: fuel.fused flash_attn_backward_k {causal = true, softmax_scale = 1.250000e-01 : f32} {{.*}} -> tensor<1x2x32x64xf16>
  %3 = fuel.fused flash_attn_backward_k {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v, %do, %alibi) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<1x8x16x64xf16>, tensor<8xf32>) -> tensor<1x2x32x64xf16>
  // CHECK: fuel.fused flash_attn_backward_v {softmax_scale = 1.250000e-01 : f32, window_size_right = 0 : i64} {{.*}} -> tensor<1x2x32x64xf16>
  %4 = fuel.fused flash_attn_backward_v {softmax_scale = 0.125 : f32, window_size_right = 0 : i64} (%q, %k, %v, %do) : (tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<1x8x16x64xf16>) -> tensor<1x2x32x64xf16>
  // CHECK: fuel.fused paged_attn {block_size = 16 : i64, softmax_scale = 1.250000e-01 : f32} {{.*}} -> tensor<3x8x64xf32>
  %5 = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%pq, %kc, %vc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return
}

// CHECK-LABEL: func @quantized
func.func @quantized(%a: tensor<4x64xf32>, %wq: tensor<72xi32>, %act: tensor<2x4x128xf16>,
                     %wp: tensor<16x64xi8>, %absmax: tensor<16x2xf32>,
                     %qw: tensor<128x2xi32>, %qz: tensor<1x2xi32>, %sc: tensor<1x16xf16>) {
  // Q4_0: 8 rows of 2 blocks of 18 bytes = 288 bytes = 72 words.
  // CHECK: fuel.fused qmatmul {k = 64 : i64, n = 8 : i64, quant_type = #fuel.quant<q4_0>} (%{{.*}}, %{{.*}}) : (tensor<4x64xf32>, tensor<72xi32>) -> tensor<4x8xf32>
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 64 : i64, n = 8 : i64} (%a, %wq) : (tensor<4x64xf32>, tensor<72xi32>) -> tensor<4x8xf32>
  // CHECK: fuel.fused nf4_matmul (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x4x128xf16>, tensor<16x64xi8>, tensor<16x2xf32>) -> tensor<2x4x16xf16>
  %1 = fuel.fused nf4_matmul {block_size = 64 : i64} (%act, %wp, %absmax) : (tensor<2x4x128xf16>, tensor<16x64xi8>, tensor<16x2xf32>) -> tensor<2x4x16xf16>
  // CHECK: fuel.fused awq_matmul {split_k_iters = 4 : i32} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x4x128xf16>, tensor<128x2xi32>, tensor<1x2xi32>, tensor<1x16xf16>) -> tensor<2x4x16xf16>
  %2 = fuel.fused awq_matmul {group_size = 128 : i64, split_k_iters = 4 : i32} (%act, %qw, %qz, %sc) : (tensor<2x4x128xf16>, tensor<128x2xi32>, tensor<1x2xi32>, tensor<1x16xf16>) -> tensor<2x4x16xf16>
  return
}

// CHECK-LABEL: func @losses_and_scans
func.func @losses_and_scans(%logits: tensor<4x10xf32>, %t: tensor<4xi64>,
                            %u: tensor<2x8x4xf32>, %a: tensor<4x3xf32>, %bc: tensor<2x8x3xf32>,
                            %sx: tensor<2x8x2x4xf32>, %dt: tensor<2x8x2xf32>, %sa: tensor<2xf32>,
                            %sb: tensor<2x8x2x3xf32>, %m: memref<4x10xf32>) {
  // CHECK: fuel.fused fused_softmax_cross_entropy (%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %0 = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<mean>, ignore_index = -100 : i64} (%logits, %t) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  // CHECK: fuel.fused fused_softmax_cross_entropy {ignore_index = 0 : i64, reduction = #fuel.reduction<none>} (%{{.*}}, %{{.*}}) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  %1 = fuel.fused fused_softmax_cross_entropy {reduction = #fuel.reduction<none>, ignore_index = 0 : i64} (%logits, %t) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  // CHECK: %{{.*}}:2 = fuel.fused selective_scan {delta_softplus = true} (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<4x3xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x4xf32>, tensor<2x4x3xf32>)
  %2:2 = fuel.fused selective_scan {delta_softplus = true} (%u, %u, %a, %bc, %bc) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<4x3xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x4xf32>, tensor<2x4x3xf32>)
  // CHECK: fuel.fused ssd_chunk_scan {chunk_size = 4 : i64} {{.*}} -> tensor<2x8x2x4xf32>
  %3 = fuel.fused ssd_chunk_scan {chunk_size = 4 : i64} (%sx, %dt, %sa, %sb, %sb) : (tensor<2x8x2x4xf32>, tensor<2x8x2xf32>, tensor<2xf32>, tensor<2x8x2x3xf32>, tensor<2x8x2x3xf32>) -> tensor<2x8x2x4xf32>
  // CHECK: fuel.fused inplace_affine {add = 1.000000e+00 : f64, mul = 2.000000e+00 : f64} (%{{.*}}) : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %4 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%logits) : (tensor<4x10xf32>) -> tensor<4x10xf32>
  // On a memref the op writes in place and has no result.
  // CHECK: fuel.fused inplace_affine {add = 1.000000e+00 : f64, mul = 2.000000e+00 : f64} (%{{.*}}) : (memref<4x10xf32>) -> ()
  fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%m) : (memref<4x10xf32>) -> ()
  return
}

// Discardable attributes print after the operands.
// CHECK-LABEL: func @extra_attrs
func.func @extra_attrs(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // CHECK: fuel.fused softmax_last_dim (%{{.*}}) attributes {tag = "a"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %0 = fuel.fused softmax_last_dim (%x) attributes {tag = "a"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
