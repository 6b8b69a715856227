// RUN: fuel-opt %s --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null

// Fused ops inside the body of a reduction (where upstream elementwise
// fusion puts a producer): the op becomes a new input of the reduction, read
// on the loops its value lives on.

// A RoPE computed inside the matmul that reads it (q rotated in the body of
// q @ k^T, along the contracted dim).
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#qr = affine_map<(b, i, j, d) -> (b, i, d)>
#t = affine_map<(b, i, j, d) -> (i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
// CHECK-DAG: #[[READ:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func @rope_in_matmul
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x16xf32>, %[[K:.+]]: tensor<2x8x16xf32>, %[[C:.+]]: tensor<8x16xf32>, %[[S:.+]]: tensor<8x16xf32>)
// CHECK: %[[R:.+]] = fuel.fused rope (%[[Q]], %[[C]], %[[S]])
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[READ]], #{{.+}}], {{.*}} ins(%[[K]], %[[R]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>)
// CHECK-NEXT: ^bb0(%[[KI:.+]]: f32, %[[RI:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[RI]], %[[KI]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]]
func.func @rope_in_matmul(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<2x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ex : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %lo = tensor.extract_slice %q[0, 0, 0] [2, 8, 8] [1, 1, 1] : tensor<2x8x16xf32> to tensor<2x8x8xf32>
  %hi = tensor.extract_slice %q[0, 0, 8] [2, 8, 8] [1, 1, 1] : tensor<2x8x16xf32> to tensor<2x8x8xf32>
  %eh = tensor.empty() : tensor<2x8x8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%hi : tensor<2x8x8xf32>) outs(%eh : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.negf %a : f32
    linalg.yield %0 : f32
  } -> tensor<2x8x8xf32>
  %rot = tensor.concat dim(2) %neg, %lo : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %y = linalg.generic {indexing_maps = [#q, #qr, #t, #t, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %rot, %cos, %sin, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2x8x16xf32>) outs(%init : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %r: f32, %c: f32, %s: f32, %kk: f32, %acc: f32):
    %0 = arith.mulf %x, %c : f32
    %1 = arith.mulf %r, %s : f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.mulf %2, %kk : f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

// A softmax divided inside the matmul that reads it (P @ V) with scores that
// are no contraction of a q and a k: no attention, but the softmax is found
// in the body.
#p = affine_map<(b, i, d, j) -> (b, i, j)>
#r = affine_map<(b, i, d, j) -> (b, i)>
#v = affine_map<(b, i, d, j) -> (b, j, d)>
#o = affine_map<(b, i, d, j) -> (b, i, d)>
// CHECK-LABEL: func @softmax_in_matmul
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x8xf32>, %[[V:.+]]: tensor<2x8x4xf32>)
// CHECK: %[[P:.+]] = fuel.fused softmax_last_dim (%[[X]])
// CHECK: linalg.generic {{.*}} ins(%[[V]], %[[P]] : tensor<2x8x4xf32>, tensor<2x8x8xf32>)
func.func @softmax_in_matmul(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x8xf32>) -> tensor<2x8xf32>
  %m = linalg.reduce ins(%x : tensor<2x8x8xf32>) outs(%im : tensor<2x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %ex = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x8x8xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = linalg.reduce ins(%ex : tensor<2x8x8xf32>) outs(%is : tensor<2x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %eo = tensor.empty() : tensor<2x8x4xf32>
  %io = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %y = linalg.generic {indexing_maps = [#p, #r, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex, %s, %v : tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8x4xf32>) outs(%io : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %vv: f32, %acc: f32):
    %0 = arith.divf %a, %b : f32
    %1 = arith.mulf %0, %vv : f32
    %2 = arith.addf %acc, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}
