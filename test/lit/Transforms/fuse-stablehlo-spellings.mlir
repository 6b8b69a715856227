// StableHLO's softmax and RoPE as torch-mlir lowers them. Softmax:
// reductions whose bodies go through 0-d tensors (tensor.from_elements /
// tensor.extract), the max reduction joined by a max with a -inf splat (its
// identity), the row statistics copied to their keepdim shape and broadcast
// by generics.
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
// report says which op stopped the match (the max, line 139) and why.
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
    // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: wrong iterators: expected reduce_max over the recipe's axes, found [parallel, parallel] (at linalg.generic, line 139:10)}}
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %21 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%22 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.divf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    return %23 : tensor<2x16x64xf32>
  }
}


// -----

// A concatenate as torch-mlir lowers StableHLO's: a generic that reads the
// halves by index (an scf.if on the index along the axis). Found as RoPE's
// rotate_half; with the halves the other way round, it is not.
// CHECK-LABEL: func.func @rope_indexed_concat
// CHECK:         fuel.fused rope (%arg0, %{{.*}}, %{{.*}}) : (tensor<2x4x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16x16xf32>
// CHECK-LABEL: func.func @rope_halves_swapped
// CHECK-NOT:     fuel.fused
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
module {
  func.func @rope_indexed_concat(%arg0: tensor<2x4x16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>) -> (tensor<2x4x16x16xf32>) {
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %extracted_slice_0 = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %0 = tensor.empty() : tensor<2x4x16x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_0 : tensor<2x4x16x8xf32>) outs(%0 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.negf %in : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x8xf32>
    %c0 = arith.constant 0 : index
    %2 = tensor.empty() : tensor<2x4x16x16xf32>
    %3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : tensor<2x4x16x16xf32>) {
    ^bb0(%out: f32):
      %18 = linalg.index 0 : index
      %19 = linalg.index 1 : index
      %20 = linalg.index 2 : index
      %21 = linalg.index 3 : index
      %22 = linalg.index 3 : index
      %c3 = arith.constant 3 : index
      %dim = tensor.dim %1, %c3 : tensor<2x4x16x8xf32>
      %23 = arith.addi %c0, %dim : index
      %24 = arith.cmpi ult, %22, %23 : index
      %25 = scf.if %24 -> (f32) {
        %26 = arith.subi %22, %c0 : index
        %extracted = tensor.extract %1[%18, %19, %20, %26] : tensor<2x4x16x8xf32>
        scf.yield %extracted : f32
      } else {
        %26 = arith.subi %22, %23 : index
        %extracted = tensor.extract %extracted_slice[%18, %19, %20, %26] : tensor<2x4x16x8xf32>
        scf.yield %extracted : f32
      }
      linalg.yield %25 : f32
    } -> tensor<2x4x16x16xf32>
    %4 = tensor.empty() : tensor<1x1x16x16xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<16x16xf32>) outs(%4 : tensor<1x1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x16xf32>
    %6 = tensor.empty() : tensor<2x4x16x16xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x1x16x16xf32>) outs(%6 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x16x16xf32>
    %8 = tensor.empty() : tensor<2x4x16x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %7 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%8 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.mulf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    %10 = tensor.empty() : tensor<1x1x16x16xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<16x16xf32>) outs(%10 : tensor<1x1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x16xf32>
    %12 = tensor.empty() : tensor<2x4x16x16xf32>
    %13 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x1x16x16xf32>) outs(%12 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x16x16xf32>
    %14 = tensor.empty() : tensor<2x4x16x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %13 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%14 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.mulf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    %16 = tensor.empty() : tensor<2x4x16x16xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %15 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%16 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.addf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    return %17 : tensor<2x4x16x16xf32>
  }

  func.func @rope_halves_swapped(%arg0: tensor<2x4x16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>) -> (tensor<2x4x16x16xf32>) {
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %extracted_slice_0 = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %0 = tensor.empty() : tensor<2x4x16x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_0 : tensor<2x4x16x8xf32>) outs(%0 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.negf %in : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x8xf32>
    %c0 = arith.constant 0 : index
    %2 = tensor.empty() : tensor<2x4x16x16xf32>
    %3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : tensor<2x4x16x16xf32>) {
    ^bb0(%out: f32):
      %18 = linalg.index 0 : index
      %19 = linalg.index 1 : index
      %20 = linalg.index 2 : index
      %21 = linalg.index 3 : index
      %22 = linalg.index 3 : index
      %c3 = arith.constant 3 : index
      %dim = tensor.dim %1, %c3 : tensor<2x4x16x8xf32>
      %23 = arith.addi %c0, %dim : index
      %24 = arith.cmpi ult, %22, %23 : index
      %25 = scf.if %24 -> (f32) {
        %26 = arith.subi %22, %c0 : index
        %extracted = tensor.extract %extracted_slice[%18, %19, %20, %26] : tensor<2x4x16x8xf32>
        scf.yield %extracted : f32
      } else {
        %26 = arith.subi %22, %23 : index
        %extracted = tensor.extract %1[%18, %19, %20, %26] : tensor<2x4x16x8xf32>
        scf.yield %extracted : f32
      }
      linalg.yield %25 : f32
    } -> tensor<2x4x16x16xf32>
    %4 = tensor.empty() : tensor<1x1x16x16xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<16x16xf32>) outs(%4 : tensor<1x1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x16xf32>
    %6 = tensor.empty() : tensor<2x4x16x16xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x1x16x16xf32>) outs(%6 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x16x16xf32>
    %8 = tensor.empty() : tensor<2x4x16x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %7 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%8 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.mulf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    %10 = tensor.empty() : tensor<1x1x16x16xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<16x16xf32>) outs(%10 : tensor<1x1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x16xf32>
    %12 = tensor.empty() : tensor<2x4x16x16xf32>
    %13 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x1x16x16xf32>) outs(%12 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x16x16xf32>
    %14 = tensor.empty() : tensor<2x4x16x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %13 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%14 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.mulf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    %16 = tensor.empty() : tensor<2x4x16x16xf32>
    // expected-remark @+1 {{fuel-fuse near miss: rope: expected rotate_half's halves}}
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %15 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%16 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %18 = arith.addf %in, %in_1 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x16x16xf32>
    return %17 : tensor<2x4x16x16xf32>
  }
}


// -----

// maxnumf with -inf is not the identity where the value is NaN (it gives
// -inf): the softmax joined that way is not found.
// CHECK-LABEL: func.func @joined_by_maxnumf
// CHECK-NOT:     fuel.fused
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @joined_by_maxnumf(%arg0: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>) {
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
      %24 = arith.maxnumf %in, %in_4 : f32
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
    // expected-remark @+1 {{fuel-fuse near miss: softmax_last_dim: wrong iterators: expected reduce_max over the recipe's axes, found [parallel, parallel]}}
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %21 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%22 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %24 = arith.divf %in, %in_4 : f32
      linalg.yield %24 : f32
    } -> tensor<2x16x64xf32>
    return %23 : tensor<2x16x64xf32>
  }
}
