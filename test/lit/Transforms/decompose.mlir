// RUN: fuel-opt %s --fuel-decompose -split-input-file -verify-diagnostics | FileCheck %s

// Each op becomes its recipe in the normal form: one scalar op per
// linalg.generic, operands broadcast through indexing maps, reductions over
// a linalg.fill of the identity.

// softmax: y = exp(x - max(x)) / sum(exp(x - max(x))) over the last dim.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MINIT:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[MINIT]] : tensor<4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUB:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], {{.*}}} ins(%[[X]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[SUB]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<4x8xf32>) outs(%[[SINIT]] : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], {{.*}}} ins(%[[EXP]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.divf
// CHECK-NOT: fuel.fused
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rms_norm: y = x / sqrt(mean(x^2) + eps); f16 is extended to f32 first
// and truncated last; the mean divides by the last dim's size.
// CHECK-LABEL: func @rms_norm_f16_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<2x?x8xf16>)
// CHECK: %[[XF:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x?x8xf16>) outs(%{{.+}} : tensor<2x?x8xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[XF]], %[[XF]] : tensor<2x?x8xf32>, tensor<2x?x8xf32>)
// CHECK: arith.mulf
// CHECK: %[[N:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SQ]] : tensor<2x?x8xf32>) outs(%{{.+}} : tensor<2x?xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x?xf32>)
// CHECK: arith.divf %{{.+}}, %[[N]]
// CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: linalg.generic {{.*}} ins(%[[MEAN]] : tensor<2x?xf32>)
// CHECK: arith.addf %{{.+}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x?x8xf16>)
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: return %[[Y]]
func.func @rms_norm_f16_dynamic(%x: tensor<2x?x8xf16>) -> tensor<2x?x8xf16> {
  %0 = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<2x?x8xf16>) -> tensor<2x?x8xf16>
  return %0 : tensor<2x?x8xf16>
}

// -----

// layer_norm: c = x - mean(x), y = c / sqrt(mean(c^2) + eps).
// CHECK-LABEL: func @layer_norm
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK-NOT: fuel.fused
func.func @layer_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused layer_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// fused_linear: y[..., m, n] = sum_k a[..., m, k] * b[k, n] + bias[n]; the
// contraction's body is the multiply and the add.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func @fused_linear
// CHECK-SAME: (%[[A0:.+]]: tensor<2x3x4xf32>, %[[B0:.+]]: tensor<4x5xf32>, %[[BIAS0:.+]]: tensor<5xf32>)
// CHECK: %[[MM:.+]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A0]], %[[B0]] : tensor<2x3x4xf32>, tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[IA:.+]]: f32, %[[IB:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[IA]], %[[IB]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}], {{.*}}} ins(%[[MM]], %[[BIAS0]] : tensor<2x3x5xf32>, tensor<5xf32>)
// CHECK: arith.addf
func.func @fused_linear(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %bias: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %0 = fuel.fused fused_linear (%a, %b, %bias) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// rope: y = x * cos + rotate_half(x) * sin, rotate_half(x) =
// concat(-x[..., D/2:], x[..., :D/2]); the tables broadcast over the batch.
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @rope
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[COS:.+]]: tensor<4x8xf32>, %[[SIN:.+]]: tensor<4x8xf32>)
// CHECK: %[[XC:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[TABLE]], #{{.+}}], {{.*}}} ins(%[[X]], %[[COS]] : tensor<2x4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK-DAG: %[[LO:.+]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 4, 4] [1, 1, 1]
// CHECK-DAG: %[[HI:.+]] = tensor.extract_slice %[[X]][0, 0, 4] [2, 4, 4] [1, 1, 1]
// CHECK: %[[NEG:.+]] = linalg.generic {{.*}} ins(%[[HI]] : tensor<2x4x4xf32>)
// CHECK: arith.negf
// CHECK: %[[ROT:.+]] = tensor.concat dim(2) %[[NEG]], %[[LO]]
// CHECK: linalg.generic {{.*}} ins(%[[ROT]], %[[SIN]] : tensor<2x4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[XC]], %{{.+}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK: arith.addf
func.func @rope(%x: tensor<2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = fuel.fused rope (%x, %cos, %sin) : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// softmax backward: dx = y * (g - sum(g * y)).
// CHECK-LABEL: func @softmax_backward
// CHECK: arith.mulf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK-NOT: fuel.fused
func.func @softmax_backward(%y: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fuel.fused softmax_last_dim_backward (%y, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The norm backwards recompute their statistics from x.
// CHECK-LABEL: func @norm_backwards
// CHECK-NOT: fuel.fused
// CHECK: math.sqrt
// CHECK: math.sqrt
// CHECK-NOT: fuel.fused
func.func @norm_backwards(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fuel.fused layer_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fuel.fused rms_norm_last_dim_backward {eps = 1.0e-05 : f64} (%x, %g) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// powi_backward: dx = exp * x^(exp - 1) * g, and 0 for exp = 0.
// CHECK-LABEL: func @powi_backward
// CHECK: %[[E:.+]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[N:.+]] = arith.constant 2 : i32
// CHECK-NEXT: math.fpowi %{{.+}}, %[[N]] : f32, i32
// CHECK: arith.mulf %[[E]], %{{.+}}
// CHECK: arith.mulf
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%[[Z]] : f32)
// CHECK: return %{{.+}}, %[[ZEROS]]
func.func @powi_backward(%x: tensor<3xf32>, %g: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = fuel.fused powi_backward {exp = 3 : i32} (%x, %g) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = fuel.fused powi_backward {exp = 0 : i32} (%x, %g) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// inplace_affine on a tensor: y = mul * x + add, params as scalar constants.
// CHECK-LABEL: func @inplace_affine
// CHECK: %[[M:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.mulf %[[M]], %{{.+}}
// CHECK: %[[A:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.addf %{{.+}}, %[[A]]
func.func @inplace_affine(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 0.5 : f64} (%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// cross-entropy: the log-softmax, picked at each row's target (a
// tensor.extract at the row's loop and the target, class 0 for ignored
// rows), negated, 0 where the target is ignored; the mean divides the sum
// by the count of kept targets.
// CHECK-LABEL: func @cross_entropy
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.log
// CHECK: %[[LOGP:.+]] = linalg.generic
// CHECK: %[[KEPT:.+]] = arith.cmpi ne, %{{.+}}, %c-100_i64 : i64
// CHECK: %[[SAFE:.+]] = arith.select %[[KEPT]], %{{.+}}, %c0_i64 : i64
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[CLASS:.+]] = arith.index_cast %[[SAFE]] : i64 to index
// CHECK: tensor.extract %[[LOGP]][%[[ROW]], %[[CLASS]]] : tensor<4x10xf32>
// CHECK: arith.negf
// CHECK: arith.cmpi ne
// CHECK: arith.select
// CHECK: iterator_types = ["reduction"]
// CHECK: iterator_types = ["reduction"]
// CHECK: arith.divf
// CHECK: return %{{.+}} : tensor<f32>
func.func @cross_entropy(%l: tensor<4x10xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = fuel.fused fused_softmax_cross_entropy (%l, %t) : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// conv2d (one group): the windows are read through the indexing map of the
// contraction, `o * stride + k`, from one zero pad of the input; the bias is
// added after, like any broadcast operand.
// CHECK-DAG: #[[XW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 + d6)>
// CHECK-DAG: #[[WW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func @conv2d
// CHECK: %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 2] high[0, 0, 1, 2]
// CHECK-NOT: tensor.pad
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[C:.+]] = linalg.generic {indexing_maps = [#[[XW]], #[[WW]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PAD]], %{{.+}} : tensor<2x3x10x12xf32>, tensor<4x3x3x5xf32>) outs(%[[INIT]] : tensor<2x4x4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.+}} : tensor<2x4x4x8xf32>, tensor<4xf32>)
// CHECK: arith.addf
func.func @conv2d(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x5xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x8xf32> {
  %0 = fuel.fused conv2d {stride = array<i64: 2, 1>, padding = array<i64: 1, 2>} (%x, %w, %b) : (tensor<2x3x8x8xf32>, tensor<4x3x3x5xf32>, tensor<4xf32>) -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// What cannot be decomposed stays fused, with a warning that says why; the
// rest of the function is still decomposed.
// CHECK-LABEL: func @declined
// CHECK: fuel.fused conv2d
// CHECK: fuel.fused flash_attn
// CHECK: fuel.fused inplace_affine {{.*}} : (memref<4xf32>) -> ()
// CHECK-NOT: fuel.fused softmax_last_dim
func.func @declined(%x: tensor<1x4x8x8xf32>, %w: tensor<?x2x3x3xf32>, %q: tensor<1x?x4x8xf32>, %m: memref<4xf32>, %s: tensor<4xf32>)
    -> (tensor<1x?x6x6xf32>, tensor<1x?x4x8xf32>, tensor<4xf32>) {
  // expected-warning @+1 {{fuel.fused conv2d left fused: grouped convolution needs static weight dims}}
  %0 = fuel.fused conv2d {groups = 2 : i64} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<?x2x3x3xf32>) -> tensor<1x?x6x6xf32>
  // expected-warning @+1 {{fuel.fused flash_attn left fused: grouped-query attention needs static head counts}}
  %1 = fuel.fused flash_attn {softmax_scale = 1.0 : f32} (%q, %q, %q) : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32>
  // expected-warning @+1 {{fuel.fused inplace_affine left fused: only tensor operands are decomposed; bufferize after decomposing}}
  fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%m) : (memref<4xf32>) -> ()
  %2 = fuel.fused softmax_last_dim (%s) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<1x?x6x6xf32>, tensor<1x?x4x8xf32>, tensor<4xf32>
}

// -----

// More declines, the IR left as it was: a transposed convolution's weight
// of unknown shape, a reduction whose reduced dims are not known.
// CHECK-LABEL: func @more_declined
// CHECK: fuel.fused conv_transpose_2d (%{{.*}}, %{{.*}}) : (tensor<1x2x4x4xf32>, tensor<?x3x3x3xf32>) -> tensor<1x3x6x6xf32>
// CHECK: fuel.fused reduce_max_to_backward (%{{.*}}, %{{.*}}) : (tensor<4x?xf32>, tensor<4x1xf32>) -> tensor<4x?xf32>
func.func @more_declined(%x: tensor<1x2x4x4xf32>, %w: tensor<?x3x3x3xf32>, %r: tensor<4x?xf32>, %g: tensor<4x1xf32>) -> (tensor<1x3x6x6xf32>, tensor<4x?xf32>) {
  // expected-warning @+1 {{fuel.fused conv_transpose_2d left fused: conv_transpose_2d needs a static weight shape}}
  %0 = fuel.fused conv_transpose_2d (%x, %w) : (tensor<1x2x4x4xf32>, tensor<?x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  // expected-warning @+1 {{fuel.fused reduce_max_to_backward left fused: which dims are reduced must be known statically (dim 1 is dynamic)}}
  %1 = fuel.fused reduce_max_to_backward (%r, %g) : (tensor<4x?xf32>, tensor<4x1xf32>) -> tensor<4x?xf32>
  return %0, %1 : tensor<1x3x6x6xf32>, tensor<4x?xf32>
}
