// RUN: fuel-opt %s --fuel-decompose -split-input-file | FileCheck %s

// The ops decomposed by hand (no recipe primitive for their indexing yet):
// the structure of each, with its formula.

// conv2d: y[b, f, oh, ow] = bias[f] + sum_{c, kh, kw}
//   xp[b, (f / (F/g)) * (C/g) + c, oh * s + kh, ow * s + kw] * w[f, c, kh, kw]
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func @conv2d
// CHECK: %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[BIAS:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<1x4x4x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PAD]], %{{.+}} : tensor<1x4x10x10xf32>, tensor<4x2x3x3xf32>) outs(%[[BIAS]] : tensor<1x4x4x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @conv2d(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = fuel.fused conv2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 2 : i64} (%x, %w, %b) : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// conv_transpose_2d: zeros between input pixels (stride), pad by
// dilation * (K - 1) - padding, correlate with the flipped kernel.
// CHECK-DAG: #[[FLIP:.+]] = affine_map<(d0, d1, d2, d3) -> ((d0 floordiv 3) * 2 + d1, d0 mod 3, -d2 + 2, -d3 + 2)>
// CHECK-LABEL: func @conv_transpose_2d
// CHECK: %[[DIL:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 2, 2] : tensor<1x2x4x4xf32> into tensor<1x2x7x7xf32>
// CHECK: tensor.pad %[[DIL]] low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], #{{.+}}]
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
func.func @conv_transpose_2d(%x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %0 = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} (%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

// causal_conv1d: y[b, c, t] = bias[c] + sum_j w[c, 0, j] * x[b, c, t + j],
// then y / (1 + exp(-y)).
// CHECK-DAG: #[[XS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>
// CHECK-DAG: #[[WS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, d3)>
// CHECK-LABEL: func @causal_conv1d
// CHECK: linalg.generic {indexing_maps = [#[[XS]], #[[WS]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
func.func @causal_conv1d(%x: tensor<2x3x9xf32>, %w: tensor<3x1x4xf32>, %b: tensor<3xf32>) -> tensor<2x3x6xf32> {
  %0 = fuel.fused causal_conv1d {use_silu = true} (%x, %w, %b) : (tensor<2x3x9xf32>, tensor<3x1x4xf32>, tensor<3xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// reduce_max_to_backward: dx = (x == max) * g / count(x == max), reduced
// over the dims where g has size 1: the max and the count on the kept dims
// alone (a projection of the loops), g read on its own shape.
// CHECK-DAG: #[[KEPT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[GROUP:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @reduce_max_to_backward
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[KEPT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.maximumf
// CHECK: arith.cmpf oeq
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[KEPT]], #[[KEPT]], #[[GROUP]], #{{.+}}]
// CHECK: arith.divf
// CHECK: arith.select
func.func @reduce_max_to_backward(%x: tensor<4x6xf32>, %g: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %0 = fuel.fused reduce_max_to_backward (%x, %g) : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// flash_attn: s = scale * q @ k^T with kv head h / (Hq / Hkv); masked by
// position (j <= i + Sk - Sq when causal) to -inf; softmax with fully masked
// rows giving 0; o = p @ v.
// CHECK-DAG: #[[KH:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-LABEL: func @flash_attn
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[KH]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[DIAG:.+]] = arith.addi %[[I]], %{{.+}} : index
// CHECK: arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: arith.select %{{.+}}, %{{.+}}, %[[NEGINF]]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.cmpf ogt
func.func @flash_attn(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %0 = fuel.fused flash_attn {softmax_scale = 0.35 : f32, causal = true} (%q, %k, %v) : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>
  return %0 : tensor<1x4x3x8xf32>
}

// -----

// flash_attn_backward_k: dS = P * (dP - rowsum(P * dP)) * scale, then
// dK[b, hk, j] = sum over the group's query heads g and queries i of
// dS[b, hk, g, i, j] * q[b, hk, g, i] (heads split to [Hkv, Hq / Hkv]).
// CHECK-LABEL: func @flash_attn_backward_k
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 5]
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @flash_attn_backward_k(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>, %do: tensor<1x4x3x8xf32>) -> tensor<1x2x5x8xf32> {
  %0 = fuel.fused flash_attn_backward_k {softmax_scale = 0.35 : f32} (%q, %k, %v, %do) : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

// -----

// paged_attn: token t of sequence s is read from block
// block_table[s, t / block_size] at slot t % block_size.
// CHECK-LABEL: func @paged_attn
// CHECK: %[[BS:.+]] = arith.constant 4 : index
// CHECK: linalg.generic
// CHECK: %[[T:.+]] = linalg.index 2 : index
// CHECK: %[[SLOT:.+]] = arith.divui %[[T]], %[[BS]] : index
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[SLOT]]] : tensor<2x3xi32>
// CHECK: arith.remui %[[T]], %[[BS]] : index
func.func @paged_attn(%q: tensor<2x4x8xf32>, %kc: tensor<6x2x4x8xf32>, %vc: tensor<6x2x4x8xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) -> tensor<2x4x8xf32> {
  %0 = fuel.fused paged_attn {softmax_scale = 0.35 : f32, block_size = 4 : i64} (%q, %kc, %vc, %bt, %cl) : (tensor<2x4x8xf32>, tensor<6x2x4x8xf32>, tensor<6x2x4x8xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// qmatmul (Q8_0): W[n, k] = d * qs[k % 32] of block n * (K / 32) + k / 32,
// d the block's f16 scale; C = A @ W^T.
// CHECK-LABEL: func @qmatmul
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x64xf32>)
// CHECK: arith.bitcast %{{.+}} : i16 to f16
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @qmatmul(%a: tensor<3x64xf32>, %w: tensor<68xi32>) -> tensor<3x4xf32> {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 64 : i64, n = 4 : i64} (%a, %w) : (tensor<3x64xf32>, tensor<68xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// nf4_matmul: W[n, k] = NF4[nibble of w[n, k / 2]] * absmax[n, k / 64].
// CHECK-DAG: #[[PACKED:.+]] = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-DAG: #[[ABSMAX:.+]] = affine_map<(d0, d1) -> (d0, d1 floordiv 64)>
// CHECK-LABEL: func @nf4_matmul
// CHECK: %[[TABLE:.+]] = arith.constant dense<[-1.000000e+00, -0.6961928,
// CHECK: linalg.generic {indexing_maps = [#[[PACKED]], #[[ABSMAX]], #{{.+}}]
// CHECK: tensor.extract %[[TABLE]]
func.func @nf4_matmul(%a: tensor<3x128xf32>, %w: tensor<6x64xi8>, %s: tensor<6x2xf32>) -> tensor<3x6xf32> {
  %0 = fuel.fused nf4_matmul (%a, %w, %s) : (tensor<3x128xf32>, tensor<6x64xi8>, tensor<6x2xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// awq_matmul: W[k, n] = (q - z) * scales[k / g, n], q and z nibbles of
// word n / 8 in AWQ order.
// CHECK-DAG: #[[QW:.+]] = affine_map<(d0, d1) -> (d0, d1 floordiv 8)>
// CHECK-DAG: #[[QZ:.+]] = affine_map<(d0, d1) -> (d0 floordiv 64, d1 floordiv 8)>
// CHECK-LABEL: func @awq_matmul
// CHECK: linalg.generic {indexing_maps = [#[[QW]], #[[QZ]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<128x2xi32>, tensor<2x2xi32>, tensor<2x16xf32>)
// CHECK: arith.shrui
// CHECK: arith.subi
// CHECK: arith.sitofp
func.func @awq_matmul(%a: tensor<2x128xf16>, %q: tensor<128x2xi32>, %z: tensor<2x2xi32>, %s: tensor<2x16xf16>) -> tensor<2x16xf16> {
  %0 = fuel.fused awq_matmul {group_size = 64 : i64} (%a, %q, %z, %s) : (tensor<2x128xf16>, tensor<128x2xi32>, tensor<2x2xi32>, tensor<2x16xf16>) -> tensor<2x16xf16>
  return %0 : tensor<2x16xf16>
}

// -----

// selective_scan: over t, h = exp(dt_t * a) * h + dt_t * u_t * b_t and
// y_t = sum_n h * c_t, carried by scf.for.
// CHECK-LABEL: func @selective_scan
// CHECK: %[[LOOP:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x3x2xf32>, tensor<1x5x3xf32>)
// CHECK: tensor.extract_slice
// CHECK: math.exp
// CHECK: tensor.insert_slice
// CHECK: scf.yield
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#0
func.func @selective_scan(%u: tensor<1x5x3xf32>, %a: tensor<3x2xf32>, %b: tensor<1x5x2xf32>) -> (tensor<1x5x3xf32>, tensor<1x3x2xf32>) {
  %0:2 = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<1x5x3xf32>, tensor<1x5x3xf32>, tensor<3x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> (tensor<1x5x3xf32>, tensor<1x3x2xf32>)
  return %0#0, %0#1 : tensor<1x5x3xf32>, tensor<1x3x2xf32>
}

// -----

// ssd_chunk_scan: the same recurrence per head with an outer-product input.
// CHECK-LABEL: func @ssd_chunk_scan
// CHECK: scf.for
// CHECK: math.exp
// CHECK-NOT: fuel.fused
func.func @ssd_chunk_scan(%x: tensor<1x4x2x3xf32>, %dt: tensor<1x4x2xf32>, %a: tensor<2xf32>, %b: tensor<1x4x2x2xf32>) -> tensor<1x4x2x3xf32> {
  %0 = fuel.fused ssd_chunk_scan {chunk_size = 2 : i64} (%x, %dt, %a, %b, %b) : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x3xf32>
  return %0 : tensor<1x4x2x3xf32>
}
