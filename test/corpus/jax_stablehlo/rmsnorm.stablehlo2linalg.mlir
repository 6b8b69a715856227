#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> ()>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1, d2) -> (d2)>
#map5 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
module @jit_rms_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x64xf32>, %arg1: tensor<64xf32>) -> (tensor<2x16x64xf32> {jax.result_info = "result"}) {
    %0 = tensor.empty() : tensor<2x16x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%0 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %27 = arith.mulf %in, %in_3 : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x64xf32>
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %2 = tensor.empty() : tensor<2x16xf32>
    %3 = linalg.fill ins(%cst_0 : f32) outs(%2 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<2x16x64xf32>) outs(%3 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_3 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_3[] : tensor<f32>
      %extracted_4 = tensor.extract %from_elements[] : tensor<f32>
      %27 = arith.addf %extracted, %extracted_4 : f32
      %from_elements_5 = tensor.from_elements %27 : tensor<f32>
      %extracted_6 = tensor.extract %from_elements_5[] : tensor<f32>
      linalg.yield %extracted_6 : f32
    } -> tensor<2x16xf32>
    %5 = tensor.empty() : tensor<2x16x1xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<2x16xf32>) outs(%5 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %cst_1 = arith.constant dense<6.400000e+01> : tensor<f32>
    %7 = tensor.empty() : tensor<2x16x1xf32>
    %8 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%7 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %9 = tensor.empty() : tensor<2x16x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %8 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%9 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %27 = arith.divf %in, %in_3 : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x1xf32>
    %cst_2 = arith.constant dense<9.99999997E-7> : tensor<f32>
    %11 = tensor.empty() : tensor<2x16x1xf32>
    %12 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_2 : tensor<f32>) outs(%11 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %13 = tensor.empty() : tensor<2x16x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10, %12 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%13 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %27 = arith.addf %in, %in_3 : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x1xf32>
    %15 = tensor.empty() : tensor<2x16x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14 : tensor<2x16x1xf32>) outs(%15 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.rsqrt %in : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x1xf32>
    %17 = tensor.empty() : tensor<2x16x64xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<2x16x1xf32>) outs(%17 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %19 = tensor.empty() : tensor<2x16x64xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %18 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%19 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %27 = arith.mulf %in, %in_3 : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x64xf32>
    %21 = tensor.empty() : tensor<1x1x64xf32>
    %22 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<64xf32>) outs(%21 : tensor<1x1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x64xf32>
    %23 = tensor.empty() : tensor<2x16x64xf32>
    %24 = linalg.generic {indexing_maps = [#map5, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<1x1x64xf32>) outs(%23 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %25 = tensor.empty() : tensor<2x16x64xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20, %24 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%25 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %27 = arith.mulf %in, %in_3 : f32
      linalg.yield %27 : f32
    } -> tensor<2x16x64xf32>
    return %26 : tensor<2x16x64xf32>
  }
}

