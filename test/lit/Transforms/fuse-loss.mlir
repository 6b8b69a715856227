// RUN: fuel-opt %s --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null

// Cross-entropy as frontends write it, fused to fused_softmax_cross_entropy
// with its reduction and ignore index recovered; and near misses that must
// stay as they are.

// torch-mlir's export, unedited: the log-softmax, the target gathered by a
// tensor.extract at a safe index (class 0 for ignored rows) in an op of its
// own, the mask and the count of kept targets in integers.
// CHECK-LABEL: func @ce_torch
// CHECK-SAME: (%[[L:.+]]: tensor<8x10xf32>, %[[T:.+]]: tensor<8xi64>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_softmax_cross_entropy (%[[L]], %[[T]])
// CHECK-NEXT: return %[[Y]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> ()>
#map5 = affine_map<() -> ()>
func.func @ce_torch(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
  %c-100_i64 = arith.constant -100 : i64
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %c10 = arith.constant 10 : index
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32>
  %cst_2 = arith.constant dense<0> : tensor<i64>
  %0 = tensor.empty() : tensor<8xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<8xi64>) -> tensor<8xi64>
  %2 = tensor.empty() : tensor<8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x10xf32>) outs(%3, %1 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_4: i64):
    %27 = linalg.index 1 : index
    %28 = arith.index_cast %27 : index to i64
    %29 = arith.maximumf %in, %out : f32
    %30 = arith.cmpf ogt, %in, %out : f32
    %31 = arith.select %30, %28, %out_4 : i64
    linalg.yield %29, %31 : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %5 = tensor.empty() : tensor<8x10xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x10xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_4: f32, %out: f32):
    %27 = arith.subf %in, %in_4 : f32
    linalg.yield %27 : f32
  } -> tensor<8x10xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<8x10xf32>) outs(%5 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %27 = math.exp %in : f32
    linalg.yield %27 : f32
  } -> tensor<8x10xf32>
  %8 = tensor.empty() : tensor<8x1xf32>
  %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<8x10xf32>) outs(%9 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %27 = arith.addf %in, %out : f32
    linalg.yield %27 : f32
  } -> tensor<8x1xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<8x1xf32>) outs(%8 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %27 = math.log %in : f32
    linalg.yield %27 : f32
  } -> tensor<8x1xf32>
  %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %11 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_4: f32, %out: f32):
    %27 = arith.subf %in, %in_4 : f32
    linalg.yield %27 : f32
  } -> tensor<8x10xf32>
  %13 = tensor.empty() : tensor<8xi1>
  %14 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%arg1 : tensor<8xi64>) outs(%13 : tensor<8xi1>) {
  ^bb0(%in: i64, %out: i1):
    %27 = arith.cmpi ne, %in, %c-100_i64 : i64
    linalg.yield %27 : i1
  } -> tensor<8xi1>
  %15 = linalg.generic {indexing_maps = [#map3, #map3, #map4, #map3], iterator_types = ["parallel"]} ins(%14, %arg1, %cst_2 : tensor<8xi1>, tensor<8xi64>, tensor<i64>) outs(%0 : tensor<8xi64>) {
  ^bb0(%in: i1, %in_4: i64, %in_5: i64, %out: i64):
    %27 = arith.select %in, %in_4, %in_5 : i64
    linalg.yield %27 : i64
  } -> tensor<8xi64>
  %expanded_3 = tensor.expand_shape %15 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_3 : tensor<8x1xi64>) outs(%9 : tensor<8x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %27 = linalg.index 0 : index
    %28 = arith.index_cast %in : i64 to index
    %29 = arith.cmpi slt, %28, %c10 : index
    cf.assert %29, "index must be smaller than dim size"
    %30 = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %30, "index must be larger or equal to 0"
    %extracted = tensor.extract %12[%27, %28] : tensor<8x10xf32>
    linalg.yield %extracted : f32
  } -> tensor<8x1xf32>
  %collapsed = tensor.collapse_shape %16 [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
  %17 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%collapsed : tensor<8xf32>) outs(%2 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %27 = arith.negf %in : f32
    linalg.yield %27 : f32
  } -> tensor<8xf32>
  %18 = linalg.generic {indexing_maps = [#map3, #map3, #map4, #map3], iterator_types = ["parallel"]} ins(%14, %17, %cst_1 : tensor<8xi1>, tensor<8xf32>, tensor<f32>) outs(%2 : tensor<8xf32>) {
  ^bb0(%in: i1, %in_4: f32, %in_5: f32, %out: f32):
    %27 = arith.select %in, %in_4, %in_5 : f32
    linalg.yield %27 : f32
  } -> tensor<8xf32>
  %19 = tensor.empty() : tensor<i64>
  %20 = linalg.fill ins(%c0_i64 : i64) outs(%19 : tensor<i64>) -> tensor<i64>
  %21 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%14 : tensor<8xi1>) outs(%20 : tensor<i64>) {
  ^bb0(%in: i1, %out: i64):
    %27 = arith.extui %in : i1 to i64
    %28 = arith.addi %27, %out : i64
    linalg.yield %28 : i64
  } -> tensor<i64>
  %22 = tensor.empty() : tensor<f32>
  %23 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = []} ins(%21 : tensor<i64>) outs(%22 : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %27 = arith.sitofp %in : i64 to f32
    linalg.yield %27 : f32
  } -> tensor<f32>
  %24 = linalg.fill ins(%cst_0 : f32) outs(%22 : tensor<f32>) -> tensor<f32>
  %25 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%18 : tensor<8xf32>) outs(%24 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %27 = arith.addf %in, %out : f32
    linalg.yield %27 : f32
  } -> tensor<f32>
  %26 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = []} ins(%25, %23 : tensor<f32>, tensor<f32>) outs(%22 : tensor<f32>) {
  ^bb0(%in: f32, %in_4: f32, %out: f32):
    %27 = arith.divf %in, %in_4 : f32
    linalg.yield %27 : f32
  } -> tensor<f32>
  return %26 : tensor<f32>
}

// -----

// The same after --linalg-fuse-elementwise-ops: the gather, negation and
// mask inside the sum's body, the count's conversion inside the division's.
// The generics left holding only the frontend's index assertions stay.
// CHECK-LABEL: func @ce_torch_fused
// CHECK: fuel.fused fused_softmax_cross_entropy
// CHECK-NOT: tensor.extract
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0) -> (d0)>
#map5 = affine_map<(d0) -> ()>
#map6 = affine_map<(d0, d1) -> ()>
#map7 = affine_map<() -> ()>
func.func @ce_torch_fused(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
  %c-100_i64 = arith.constant -100 : i64
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %c10 = arith.constant 10 : index
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %expanded = tensor.expand_shape %0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%expanded : tensor<8x1xf32>) -> tensor<8x1xf32>
  %expanded_1 = tensor.expand_shape %arg0 [[0, 1], [2]] output_shape [8, 1, 10] : tensor<8x10xf32> into tensor<8x1x10xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%expanded_1 : tensor<8x1x10xf32>) outs(%1 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %18 = arith.maximumf %in, %out : f32
    linalg.yield %18 : f32
  } -> tensor<8x1xf32>
  %3 = tensor.empty() : tensor<8x10xf32>
  %4 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%3 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %18 = arith.subf %in, %in_5 : f32
    linalg.yield %18 : f32
  } -> tensor<8x10xf32>
  %5 = tensor.empty() : tensor<8x1xf32>
  %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %7 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "reduction"]} ins(%4 : tensor<8x10xf32>) outs(%6 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %18 = math.exp %in : f32
    %19 = arith.addf %18, %out : f32
    linalg.yield %19 : f32
  } -> tensor<8x1xf32>
  %8 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel"]} ins(%4, %7 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%3 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %18 = math.log %in_5 : f32
    %19 = arith.subf %in, %18 : f32
    linalg.yield %19 : f32
  } -> tensor<8x10xf32>
  %9 = tensor.empty() : tensor<8xi1>
  %10 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%arg1 : tensor<8xi64>) outs(%9 : tensor<8xi1>) {
  ^bb0(%in: i64, %out: i1):
    %18 = arith.cmpi ne, %in, %c-100_i64 : i64
    linalg.yield %18 : i1
  } -> tensor<8xi1>
  %expanded_2 = tensor.expand_shape %10 [[0, 1]] output_shape [8, 1] : tensor<8xi1> into tensor<8x1xi1>
  %expanded_3 = tensor.expand_shape %arg1 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%expanded_2, %expanded_3 : tensor<8x1xi1>, tensor<8x1xi64>) {
  ^bb0(%in: i1, %in_5: i64):
    %18 = arith.select %in, %in_5, %c0_i64 : i64
    %19 = arith.index_cast %18 : i64 to index
    %20 = arith.cmpi slt, %19, %c10 : index
    cf.assert %20, "index must be smaller than dim size"
    %21 = arith.cmpi sge, %18, %c0_i64 : i64
    cf.assert %21, "index must be larger or equal to 0"
    linalg.yield
  }
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%expanded_2, %expanded_3 : tensor<8x1xi1>, tensor<8x1xi64>) {
  ^bb0(%in: i1, %in_5: i64):
    %18 = arith.select %in, %in_5, %c0_i64 : i64
    %19 = arith.index_cast %18 : i64 to index
    %20 = arith.cmpi slt, %19, %c10 : index
    cf.assert %20, "index must be smaller than dim size"
    %21 = arith.cmpi sge, %18, %c0_i64 : i64
    cf.assert %21, "index must be larger or equal to 0"
    linalg.yield
  }
  %expanded_4 = tensor.expand_shape %10 [[0, 1]] output_shape [8, 1] : tensor<8xi1> into tensor<8x1xi1>
  linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%expanded_2, %expanded_3 : tensor<8x1xi1>, tensor<8x1xi64>) {
  ^bb0(%in: i1, %in_5: i64):
    %18 = arith.select %in, %in_5, %c0_i64 : i64
    %19 = arith.index_cast %18 : i64 to index
    %20 = arith.cmpi slt, %19, %c10 : index
    cf.assert %20, "index must be smaller than dim size"
    %21 = arith.cmpi sge, %18, %c0_i64 : i64
    cf.assert %21, "index must be larger or equal to 0"
    linalg.yield
  }
  %11 = tensor.empty() : tensor<i64>
  %12 = linalg.fill ins(%c0_i64 : i64) outs(%11 : tensor<i64>) -> tensor<i64>
  %13 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%10 : tensor<8xi1>) outs(%12 : tensor<i64>) {
  ^bb0(%in: i1, %out: i64):
    %18 = arith.extui %in : i1 to i64
    %19 = arith.addi %18, %out : i64
    linalg.yield %19 : i64
  } -> tensor<i64>
  %14 = tensor.empty() : tensor<f32>
  %15 = linalg.fill ins(%cst_0 : f32) outs(%14 : tensor<f32>) -> tensor<f32>
  %16 = linalg.generic {indexing_maps = [#map2, #map2, #map2, #map6], iterator_types = ["reduction", "reduction"]} ins(%expanded_4, %expanded_2, %expanded_3 : tensor<8x1xi1>, tensor<8x1xi1>, tensor<8x1xi64>) outs(%15 : tensor<f32>) {
  ^bb0(%in: i1, %in_5: i1, %in_6: i64, %out: f32):
    %18 = linalg.index 0 : index
    %19 = arith.select %in_5, %in_6, %c0_i64 : i64
    %20 = arith.index_cast %19 : i64 to index
    %21 = arith.cmpi slt, %20, %c10 : index
    cf.assert %21, "index must be smaller than dim size"
    %22 = arith.cmpi sge, %19, %c0_i64 : i64
    cf.assert %22, "index must be larger or equal to 0"
    %extracted = tensor.extract %8[%18, %20] : tensor<8x10xf32>
    %23 = arith.negf %extracted : f32
    %24 = arith.select %in, %23, %cst_0 : f32
    %25 = arith.addf %24, %out : f32
    linalg.yield %25 : f32
  } -> tensor<f32>
  %17 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = []} ins(%16, %13 : tensor<f32>, tensor<i64>) outs(%14 : tensor<f32>) {
  ^bb0(%in: f32, %in_5: i64, %out: f32):
    %18 = arith.sitofp %in_5 : i64 to f32
    %19 = arith.divf %in, %18 : f32
    linalg.yield %19 : f32
  } -> tensor<f32>
  return %17 : tensor<f32>
}

// -----

// TOSA lowered to linalg: the log-softmax flattened to [1, 80, 1] and read
// at row * 10 + target, computed in integer tensors (an iota and the safe
// targets side by side, times [10, 1], summed); the mean as a product with
// 1 / count, the count of not(ignored).
// CHECK-LABEL: func @ce_tosa
// CHECK-SAME: (%[[L:.+]]: tensor<8x10xf32>, %[[T:.+]]: tensor<8xi64>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_softmax_cross_entropy (%[[L]], %[[T]])
// CHECK-NEXT: return %[[Y]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0) -> (0)>
#map4 = affine_map<(d0, d1) -> (0, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map7 = affine_map<() -> ()>
func.func @ce_tosa(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
  %cst = arith.constant 1.000000e+00 : f32
  %c0_i64 = arith.constant 0 : i64
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c0_i32 = arith.constant 0 : i32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant -3.40282347E+38 : f32
  %cst_2 = arith.constant dense<[[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[7]]]> : tensor<8x1x1xi32>
  %cst_3 = arith.constant dense<0.000000e+00> : tensor<1xf32>
  %cst_4 = arith.constant dense<-100> : tensor<1xi64>
  %cst_5 = arith.constant dense<0> : tensor<1xi64>
  %cst_6 = arith.constant dense<[[10, 1]]> : tensor<1x2xi32>
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %reduced = linalg.reduce ins(%arg0 : tensor<8x10xf32>) outs(%1 : tensor<8xf32>) dimensions = [1] 
    (%in: f32, %init: f32) {
      %43 = arith.maximumf %in, %init : f32
      linalg.yield %43 : f32
    }
  %expanded = tensor.expand_shape %reduced [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %2 = tensor.empty() : tensor<8x10xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x10xf32>, tensor<8x1xf32>) outs(%2 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %43 = arith.subf %in, %in_19 : f32
    linalg.yield %43 : f32
  } -> tensor<8x10xf32>
  %4 = tensor.empty() : tensor<8x10xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<8x10xf32>) outs(%4 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %43 = math.exp %in : f32
    linalg.yield %43 : f32
  } -> tensor<8x10xf32>
  %6 = tensor.empty() : tensor<8xf32>
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<8xf32>) -> tensor<8xf32>
  %reduced_7 = linalg.reduce ins(%5 : tensor<8x10xf32>) outs(%7 : tensor<8xf32>) dimensions = [1] 
    (%in: f32, %init: f32) {
      %43 = arith.addf %in, %init : f32
      linalg.yield %43 : f32
    }
  %expanded_8 = tensor.expand_shape %reduced_7 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %8 = tensor.empty() : tensor<8x1xf32>
  %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_8 : tensor<8x1xf32>) outs(%8 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %43 = math.log %in : f32
    linalg.yield %43 : f32
  } -> tensor<8x1xf32>
  %10 = tensor.empty() : tensor<8x10xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %9 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%10 : tensor<8x10xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %43 = arith.subf %in, %in_19 : f32
    linalg.yield %43 : f32
  } -> tensor<8x10xf32>
  %12 = tensor.empty() : tensor<8xi1>
  %13 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel"]} ins(%arg1, %cst_4 : tensor<8xi64>, tensor<1xi64>) outs(%12 : tensor<8xi1>) {
  ^bb0(%in: i64, %in_19: i64, %out: i1):
    %43 = arith.cmpi eq, %in, %in_19 : i64
    linalg.yield %43 : i1
  } -> tensor<8xi1>
  %14 = tensor.empty() : tensor<8xi64>
  %15 = linalg.generic {indexing_maps = [#map2, #map3, #map2, #map2], iterator_types = ["parallel"]} ins(%13, %cst_5, %arg1 : tensor<8xi1>, tensor<1xi64>, tensor<8xi64>) outs(%14 : tensor<8xi64>) {
  ^bb0(%in: i1, %in_19: i64, %in_20: i64, %out: i64):
    %43 = arith.select %in, %in_19, %in_20 : i64
    linalg.yield %43 : i64
  } -> tensor<8xi64>
  %expanded_9 = tensor.expand_shape %15 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %16 = tensor.empty() : tensor<8x1xi32>
  %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_9 : tensor<8x1xi64>) outs(%16 : tensor<8x1xi32>) {
  ^bb0(%in: i64, %out: i32):
    %43 = arith.trunci %in : i64 to i32
    linalg.yield %43 : i32
  } -> tensor<8x1xi32>
  %expanded_10 = tensor.expand_shape %17 [[0], [1, 2]] output_shape [8, 1, 1] : tensor<8x1xi32> into tensor<8x1x1xi32>
  %18 = tensor.empty() : tensor<8x1x2xi32>
  %inserted_slice = tensor.insert_slice %cst_2 into %18[0, 0, 0] [8, 1, 1] [1, 1, 1] : tensor<8x1x1xi32> into tensor<8x1x2xi32>
  %inserted_slice_11 = tensor.insert_slice %expanded_10 into %inserted_slice[0, 0, 1] [8, 1, 1] [1, 1, 1] : tensor<8x1x1xi32> into tensor<8x1x2xi32>
  %collapsed = tensor.collapse_shape %11 [[0, 1]] : tensor<8x10xf32> into tensor<80xf32>
  %expanded_12 = tensor.expand_shape %collapsed [[0, 1, 2]] output_shape [1, 80, 1] : tensor<80xf32> into tensor<1x80x1xf32>
  %collapsed_13 = tensor.collapse_shape %inserted_slice_11 [[0, 1], [2]] : tensor<8x1x2xi32> into tensor<8x2xi32>
  %19 = tensor.empty() : tensor<8x2xi32>
  %20 = linalg.generic {indexing_maps = [#map, #map4, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed_13, %cst_6 : tensor<8x2xi32>, tensor<1x2xi32>) outs(%19 : tensor<8x2xi32>) {
  ^bb0(%in: i32, %in_19: i32, %out: i32):
    %43 = arith.muli %in, %in_19 : i32
    linalg.yield %43 : i32
  } -> tensor<8x2xi32>
  %21 = tensor.empty() : tensor<8xi32>
  %22 = linalg.fill ins(%c0_i32 : i32) outs(%21 : tensor<8xi32>) -> tensor<8xi32>
  %reduced_14 = linalg.reduce ins(%20 : tensor<8x2xi32>) outs(%22 : tensor<8xi32>) dimensions = [1] 
    (%in: i32, %init: i32) {
      %43 = arith.addi %in, %init : i32
      linalg.yield %43 : i32
    }
  %expanded_15 = tensor.expand_shape %reduced_14 [[0, 1]] output_shape [1, 8] : tensor<8xi32> into tensor<1x8xi32>
  %23 = tensor.empty() : tensor<1x8x1xf32>
  %24 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_15 : tensor<1x8xi32>) outs(%23 : tensor<1x8x1xf32>) {
  ^bb0(%in: i32, %out: f32):
    %43 = arith.index_cast %in : i32 to index
    %extracted = tensor.extract %expanded_12[%c0, %43, %c0] : tensor<1x80x1xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x8x1xf32>
  %collapsed_16 = tensor.collapse_shape %24 [[0, 1, 2]] : tensor<1x8x1xf32> into tensor<8xf32>
  %25 = tensor.empty() : tensor<8xf32>
  %26 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%collapsed_16 : tensor<8xf32>) outs(%25 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %43 = arith.negf %in : f32
    linalg.yield %43 : f32
  } -> tensor<8xf32>
  %27 = tensor.empty() : tensor<8xf32>
  %28 = linalg.generic {indexing_maps = [#map2, #map3, #map2, #map2], iterator_types = ["parallel"]} ins(%13, %cst_3, %26 : tensor<8xi1>, tensor<1xf32>, tensor<8xf32>) outs(%27 : tensor<8xf32>) {
  ^bb0(%in: i1, %in_19: f32, %in_20: f32, %out: f32):
    %43 = arith.select %in, %in_19, %in_20 : f32
    linalg.yield %43 : f32
  } -> tensor<8xf32>
  %29 = tensor.empty() : tensor<8xi1>
  %30 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%13 : tensor<8xi1>) outs(%29 : tensor<8xi1>) {
  ^bb0(%in: i1, %out: i1):
    %43 = arith.xori %in, %true : i1
    linalg.yield %43 : i1
  } -> tensor<8xi1>
  %31 = tensor.empty() : tensor<8xi64>
  %32 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%30 : tensor<8xi1>) outs(%31 : tensor<8xi64>) {
  ^bb0(%in: i1, %out: i64):
    %43 = arith.extui %in : i1 to i64
    linalg.yield %43 : i64
  } -> tensor<8xi64>
  %33 = tensor.empty() : tensor<i64>
  %34 = linalg.fill ins(%c0_i64 : i64) outs(%33 : tensor<i64>) -> tensor<i64>
  %reduced_17 = linalg.reduce ins(%32 : tensor<8xi64>) outs(%34 : tensor<i64>) dimensions = [0] 
    (%in: i64, %init: i64) {
      %43 = arith.addi %in, %init : i64
      linalg.yield %43 : i64
    }
  %35 = tensor.empty() : tensor<f32>
  %36 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = []} ins(%reduced_17 : tensor<i64>) outs(%35 : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %43 = arith.sitofp %in : i64 to f32
    linalg.yield %43 : f32
  } -> tensor<f32>
  %37 = tensor.empty() : tensor<f32>
  %38 = linalg.fill ins(%cst_0 : f32) outs(%37 : tensor<f32>) -> tensor<f32>
  %reduced_18 = linalg.reduce ins(%28 : tensor<8xf32>) outs(%38 : tensor<f32>) dimensions = [0] 
    (%in: f32, %init: f32) {
      %43 = arith.addf %in, %init : f32
      linalg.yield %43 : f32
    }
  %39 = tensor.empty() : tensor<f32>
  %40 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = []} ins(%36 : tensor<f32>) outs(%39 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %43 = arith.divf %cst, %in : f32
    linalg.yield %43 : f32
  } -> tensor<f32>
  %41 = tensor.empty() : tensor<f32>
  %42 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = []} ins(%reduced_18, %40 : tensor<f32>, tensor<f32>) outs(%41 : tensor<f32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %43 = arith.mulf %in, %in_19 : f32
    linalg.yield %43 : f32
  } -> tensor<f32>
  return %42 : tensor<f32>
}

// -----

// Summed, with another ignore index; gather, negation and mask in one body.
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @ce_sum
// CHECK-SAME: (%[[L:.+]]: tensor<4x5xf32>, %[[T:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_softmax_cross_entropy {ignore_index = 3 : i64, reduction = #fuel.reduction<sum>} (%[[L]], %[[T]])
// CHECK-NEXT: return %[[Y]]
func.func @ce_sum(%l: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ign = arith.constant 3 : i64
  %c0 = arith.constant 0 : i64
  %er = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%l : tensor<4x5xf32>) outs(%im : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sh = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%l, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %ex = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%ex : tensor<4x5xf32>) outs(%is : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %lp = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = math.log %b : f32
    %1 = arith.subf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>
  %loss = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%t : tensor<4xi64>) outs(%er : tensor<4xf32>) {
  ^bb0(%ti: i64, %o: f32):
    %k = arith.cmpi ne, %ti, %ign : i64
    %ks = arith.cmpi ne, %ti, %ign : i64
    %safe = arith.select %ks, %ti, %c0 : i64
    %row = linalg.index 0 : index
    %col = arith.index_cast %safe : i64 to index
    %x = tensor.extract %lp[%row, %col] : tensor<4x5xf32>
    %n = arith.negf %x : f32
    %y = arith.select %k, %n, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %z = tensor.empty() : tensor<f32>
  %iz = linalg.fill ins(%zero : f32) outs(%z : tensor<f32>) -> tensor<f32>
  %tot = linalg.reduce ins(%loss : tensor<4xf32>) outs(%iz : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %tot : tensor<f32>
}

// -----

// Per row (no reduction).
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @ce_none
// CHECK-NEXT: %[[Y:.+]] = fuel.fused fused_softmax_cross_entropy {ignore_index = 3 : i64, reduction = #fuel.reduction<none>}
// CHECK-NEXT: return %[[Y]]
func.func @ce_none(%l: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ign = arith.constant 3 : i64
  %c0 = arith.constant 0 : i64
  %er = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%l : tensor<4x5xf32>) outs(%im : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sh = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%l, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %ex = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%ex : tensor<4x5xf32>) outs(%is : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %lp = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = math.log %b : f32
    %1 = arith.subf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>
  %loss = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%t : tensor<4xi64>) outs(%er : tensor<4xf32>) {
  ^bb0(%ti: i64, %o: f32):
    %k = arith.cmpi ne, %ti, %ign : i64
    %ks = arith.cmpi ne, %ti, %ign : i64
    %safe = arith.select %ks, %ti, %c0 : i64
    %row = linalg.index 0 : index
    %col = arith.index_cast %safe : i64 to index
    %x = tensor.extract %lp[%row, %col] : tensor<4x5xf32>
    %n = arith.negf %x : f32
    %y = arith.select %k, %n, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %loss : tensor<4xf32>
}

// -----

// The safe index tests another ignore index than the mask: a row with target
// -100 is kept by the mask but reads class 0.
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @ce_two_ignore_indices
// CHECK-NOT: fuel.fused
func.func @ce_two_ignore_indices(%l: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ign = arith.constant 3 : i64
  %c0 = arith.constant 0 : i64
  %er = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%l : tensor<4x5xf32>) outs(%im : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sh = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%l, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %ex = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%ex : tensor<4x5xf32>) outs(%is : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %lp = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = math.log %b : f32
    %1 = arith.subf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>
  // expected-remark @+1 {{fuel-fuse near miss: fused_softmax_cross_entropy: param 'ignore_index' has two different values}}
  %loss = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%t : tensor<4xi64>) outs(%er : tensor<4xf32>) {
  ^bb0(%ti: i64, %o: f32):
    %k = arith.cmpi ne, %ti, %ign : i64
    %other = arith.constant -100 : i64
    %ks = arith.cmpi ne, %ti, %other : i64
    %safe = arith.select %ks, %ti, %c0 : i64
    %row = linalg.index 0 : index
    %col = arith.index_cast %safe : i64 to index
    %x = tensor.extract %lp[%row, %col] : tensor<4x5xf32>
    %n = arith.negf %x : f32
    %y = arith.select %k, %n, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %z = tensor.empty() : tensor<f32>
  %iz = linalg.fill ins(%zero : f32) outs(%z : tensor<f32>) -> tensor<f32>
  // expected-remark @+1 {{fuel-fuse near miss: fused_softmax_cross_entropy: param 'ignore_index' has two different values}}
  %tot = linalg.reduce ins(%loss : tensor<4xf32>) outs(%iz : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %tot : tensor<f32>
}

// -----

// Every row reads row 0's log-probabilities: not a gather of its own row.
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @ce_row_zero
// CHECK-NOT: fuel.fused
func.func @ce_row_zero(%l: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ign = arith.constant 3 : i64
  %c0 = arith.constant 0 : i64
  %er = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %im = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%l : tensor<4x5xf32>) outs(%im : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sh = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%l, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %ex = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x5xf32>
  %is = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%ex : tensor<4x5xf32>) outs(%is : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %lp = linalg.generic {indexing_maps = [#m2, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%sh, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = math.log %b : f32
    %1 = arith.subf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>
  // expected-remark @+1 {{fuel-fuse near miss: fused_softmax_cross_entropy: a gather reads a row other than its own}}
  %loss = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%t : tensor<4xi64>) outs(%er : tensor<4xf32>) {
  ^bb0(%ti: i64, %o: f32):
    %k = arith.cmpi ne, %ti, %ign : i64
    %ks = arith.cmpi ne, %ti, %ign : i64
    %safe = arith.select %ks, %ti, %c0 : i64
    %row = linalg.index 0 : index
    %col = arith.index_cast %safe : i64 to index
    %c0i = arith.constant 0 : index
    %x = tensor.extract %lp[%c0i, %col] : tensor<4x5xf32>
    %n = arith.negf %x : f32
    %y = arith.select %k, %n, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %z = tensor.empty() : tensor<f32>
  %iz = linalg.fill ins(%zero : f32) outs(%z : tensor<f32>) -> tensor<f32>
  // expected-remark @+1 {{fuel-fuse near miss: fused_softmax_cross_entropy: a gather reads a row other than its own}}
  %tot = linalg.reduce ins(%loss : tensor<4xf32>) outs(%iz : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  return %tot : tensor<f32>
}
