// StableHLO's softmax as torch-mlir lowers it: reductions whose bodies go
// through 0-d tensors (tensor.from_elements / tensor.extract), the max
// reduction joined by a max with a -inf splat (its identity), the row
// statistics copied to their keepdim shape and broadcast by generics.
// RUN: fuel-opt %s --split-input-file --fuel-fuse | FileCheck %s
// RUN: fuel-opt %s --split-input-file --fuel-fuse="report=near-misses" \
// RUN:   -verify-diagnostics -o /dev/null

// CHECK-LABEL: func.func @joined_with_neg_inf
// CHECK:         %[[R:.*]] = fuel.fused softmax_last_dim (%arg0) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:    return %[[R]]
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @joined_with_neg_inf(%arg0: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>) {
    %cst = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_0 = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<2x16xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%1 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_4 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_4[] : tensor<f32>
      %extracted_5 = tensor.extract %from_elements[] : tensor<f32>
      %24 = arith.maximumf %extracted, %extracted_5 : f32
      %from_elements_6 = tensor.from_elements %24 : tensor<f32>
      %extracted_7 = tensor.extract %from_elements_6[] : tensor<f32>
      linalg.yield %extracted_7 : f32
    } -> tensor<2x16xf32>
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %3 = tensor.empty() : tensor<2x16xf32>
    %4 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%3 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16xf32>
    %5 = tensor.empty() : tensor<2x16xf32>
    %6 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%4, %2 : tensor<2x16xf32>, tensor<2x16xf32>) outs(%5 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.maximumf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16xf32>
    %7 = tensor.empty() : tensor<2x16x1xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x16xf32>) outs(%7 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %9 = tensor.empty() : tensor<2x16x64xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x16x1xf32>) outs(%9 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %11 = tensor.empty() : tensor<2x16x64xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %10 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%11 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.subf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    %13 = tensor.empty() : tensor<2x16x64xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x16x64xf32>) outs(%13 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = math.exp %in : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<2x16xf32>
    %16 = linalg.fill ins(%cst_3 : f32) outs(%15 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%14 : tensor<2x16x64xf32>) outs(%16 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_4 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_4[] : tensor<f32>
      %extracted_5 = tensor.extract %from_elements[] : tensor<f32>
      %24 = arith.addf %extracted, %extracted_5 : f32
      %from_elements_6 = tensor.from_elements %24 : tensor<f32>
      %extracted_7 = tensor.extract %from_elements_6[] : tensor<f32>
      linalg.yield %extracted_7 : f32
    } -> tensor<2x16xf32>
    %18 = tensor.empty() : tensor<2x16x1xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<2x16xf32>) outs(%18 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %20 = tensor.empty() : tensor<2x16x64xf32>
    %21 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19 : tensor<2x16x1xf32>) outs(%20 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %22 = tensor.empty() : tensor<2x16x64xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %21 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%22 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.divf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    return %23 : tensor<2x16x64xf32>
  }
}

// -----

// A max with 0 is a ReLU of the row max, not its identity: not softmax. The
// report says which op stopped the match (the max, line 138) and why.
// CHECK-LABEL: func.func @joined_with_zero
// CHECK-NOT:     fuel.fused
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @joined_with_zero(%arg0: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>) {
    %cst = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_0 = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<2x16xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%1 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_4 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_4[] : tensor<f32>
      %extracted_5 = tensor.extract %from_elements[] : tensor<f32>
      %24 = arith.maximumf %extracted, %extracted_5 : f32
      %from_elements_6 = tensor.from_elements %24 : tensor<f32>
      %extracted_7 = tensor.extract %from_elements_6[] : tensor<f32>
      linalg.yield %extracted_7 : f32
    } -> tensor<2x16xf32>
    %cst_1 = arith.constant dense<0.0> : tensor<f32>
    %3 = tensor.empty() : tensor<2x16xf32>
    %4 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%3 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16xf32>
    %5 = tensor.empty() : tensor<2x16xf32>
    %6 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%4, %2 : tensor<2x16xf32>, tensor<2x16xf32>) outs(%5 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.maximumf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16xf32>
    %7 = tensor.empty() : tensor<2x16x1xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x16xf32>) outs(%7 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %9 = tensor.empty() : tensor<2x16x64xf32>
    %10 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x16x1xf32>) outs(%9 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %11 = tensor.empty() : tensor<2x16x64xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %10 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%11 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.subf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    %13 = tensor.empty() : tensor<2x16x64xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x16x64xf32>) outs(%13 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %24 = math.exp %in : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<2x16xf32>
    %16 = linalg.fill ins(%cst_3 : f32) outs(%15 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%14 : tensor<2x16x64xf32>) outs(%16 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_4 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_4[] : tensor<f32>
      %extracted_5 = tensor.extract %from_elements[] : tensor<f32>
      %24 = arith.addf %extracted, %extracted_5 : f32
      %from_elements_6 = tensor.from_elements %24 : tensor<f32>
      %extracted_7 = tensor.extract %from_elements_6[] : tensor<f32>
      linalg.yield %extracted_7 : f32
    } -> tensor<2x16xf32>
    %18 = tensor.empty() : tensor<2x16x1xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<2x16xf32>) outs(%18 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %20 = tensor.empty() : tensor<2x16x64xf32>
    %21 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19 : tensor<2x16x1xf32>) outs(%20 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %22 = tensor.empty() : tensor<2x16x64xf32>
    // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: wrong iterators: expected reduce_max over the recipe's axes, found [parallel, parallel] (at linalg.generic, line 138:10)}}
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %21 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%22 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.divf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    return %23 : tensor<2x16x64xf32>
  }
}
