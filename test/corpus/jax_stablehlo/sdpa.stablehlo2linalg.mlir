#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3, d5)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d1, d5)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> ()>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> ()>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
#map9 = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d0, d4)>
#map10 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>
#map11 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d5, d1, d2)>
#map12 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1, d4, d5)>
#map13 = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4, d0, d2)>
#map14 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d2, d4)>
module @jit_sdpa attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x16x4x16xf32>, %arg1: tensor<1x16x4x16xf32>, %arg2: tensor<1x16x4x16xf32>) -> (tensor<1x16x4x16xf32> {jax.result_info = "result"}) {
    %expanded = tensor.expand_shape %arg0 [[0], [1], [2], [3, 4]] output_shape [1, 16, 4, 1, 16] : tensor<1x16x4x16xf32> into tensor<1x16x4x1x16xf32>
    %0 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x16x1x16xf32>) -> tensor<1x4x16x1x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expanded, %arg1 : tensor<1x16x4x1x16xf32>, tensor<1x16x4x16xf32>) outs(%1 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.mulf %in, %in_7 : f32
      %43 = arith.addf %out, %42 : f32
      linalg.yield %43 : f32
    } -> tensor<1x4x16x1x16xf32>
    %cst_0 = arith.constant dense<2.500000e-01> : tensor<f32>
    %3 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %4 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%cst_0 : tensor<f32>) outs(%3 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1x16xf32>
    %5 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%2, %4 : tensor<1x4x16x1x16xf32>, tensor<1x4x16x1x16xf32>) outs(%5 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.mulf %in, %in_7 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x1x16xf32>
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_2 = arith.constant 0xFF800000 : f32
    %7 = tensor.empty() : tensor<1x4x16x1xf32>
    %8 = linalg.fill ins(%cst_2 : f32) outs(%7 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %9 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%6 : tensor<1x4x16x1x16xf32>) outs(%8 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_7 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_7[] : tensor<f32>
      %extracted_8 = tensor.extract %from_elements[] : tensor<f32>
      %42 = arith.maximumf %extracted, %extracted_8 : f32
      %from_elements_9 = tensor.from_elements %42 : tensor<f32>
      %extracted_10 = tensor.extract %from_elements_9[] : tensor<f32>
      linalg.yield %extracted_10 : f32
    } -> tensor<1x4x16x1xf32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %10 = tensor.empty() : tensor<1x4x16x1xf32>
    %11 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_3 : tensor<f32>) outs(%10 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1xf32>
    %12 = tensor.empty() : tensor<1x4x16x1xf32>
    %13 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %9 : tensor<1x4x16x1xf32>, tensor<1x4x16x1xf32>) outs(%12 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.maximumf %in, %in_7 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x1xf32>
    %14 = tensor.empty() : tensor<1x1x4x16xf32>
    %15 = linalg.generic {indexing_maps = [#map8, #map7], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x4x16x1xf32>) outs(%14 : tensor<1x1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16xf32>
    %16 = tensor.empty() : tensor<1x1x4x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x1x4x16xf32>) outs(%16 : tensor<1x1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x1xf32>
    %18 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %19 = linalg.generic {indexing_maps = [#map9, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<1x4x16x1x16xf32>) outs(%18 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %20 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %21 = linalg.generic {indexing_maps = [#map10, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<1x1x4x16x1xf32>) outs(%20 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %22 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %23 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%19, %21 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%22 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.subf %in, %in_7 : f32
      linalg.yield %42 : f32
    } -> tensor<1x1x4x16x16xf32>
    %24 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %25 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x1x4x16x16xf32>) outs(%24 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %42 = math.exp %in : f32
      linalg.yield %42 : f32
    } -> tensor<1x1x4x16x16xf32>
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_5 = arith.constant 0.000000e+00 : f32
    %26 = tensor.empty() : tensor<1x1x4x16xf32>
    %27 = linalg.fill ins(%cst_5 : f32) outs(%26 : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
    %28 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%25 : tensor<1x1x4x16x16xf32>) outs(%27 : tensor<1x1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_7 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_7[] : tensor<f32>
      %extracted_8 = tensor.extract %from_elements[] : tensor<f32>
      %42 = arith.addf %extracted, %extracted_8 : f32
      %from_elements_9 = tensor.from_elements %42 : tensor<f32>
      %extracted_10 = tensor.extract %from_elements_9[] : tensor<f32>
      linalg.yield %extracted_10 : f32
    } -> tensor<1x1x4x16xf32>
    %29 = tensor.empty() : tensor<1x1x4x16x1xf32>
    %30 = linalg.generic {indexing_maps = [#map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%28 : tensor<1x1x4x16xf32>) outs(%29 : tensor<1x1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x1xf32>
    %31 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %32 = linalg.generic {indexing_maps = [#map10, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%30 : tensor<1x1x4x16x1xf32>) outs(%31 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %33 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %34 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%25, %32 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%33 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.divf %in, %in_7 : f32
      linalg.yield %42 : f32
    } -> tensor<1x1x4x16x16xf32>
    %35 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %cst_6 = arith.constant 0.000000e+00 : f32
    %36 = linalg.fill ins(%cst_6 : f32) outs(%35 : tensor<1x4x16x1x16xf32>) -> tensor<1x4x16x1x16xf32>
    %37 = linalg.generic {indexing_maps = [#map11, #map12, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg2, %34 : tensor<1x16x4x16xf32>, tensor<1x1x4x16x16xf32>) outs(%36 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %42 = arith.mulf %in, %in_7 : f32
      %43 = arith.addf %out, %42 : f32
      linalg.yield %43 : f32
    } -> tensor<1x4x16x1x16xf32>
    %38 = tensor.empty() : tensor<1x1x16x4x16xf32>
    %39 = linalg.generic {indexing_maps = [#map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%37 : tensor<1x4x16x1x16xf32>) outs(%38 : tensor<1x1x16x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x4x16xf32>
    %40 = tensor.empty() : tensor<1x16x4x1x16xf32>
    %41 = linalg.generic {indexing_maps = [#map14, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%39 : tensor<1x1x16x4x16xf32>) outs(%40 : tensor<1x16x4x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x4x1x16xf32>
    %collapsed = tensor.collapse_shape %41 [[0], [1], [2], [3, 4]] : tensor<1x16x4x1x16xf32> into tensor<1x16x4x16xf32>
    return %collapsed : tensor<1x16x4x16xf32>
  }
}

