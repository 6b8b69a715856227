#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
module @jit_rope attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>) -> (tensor<2x4x16x16xf32> {jax.result_info = "result"}) {
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
}

