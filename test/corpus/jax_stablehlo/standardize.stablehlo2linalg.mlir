#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> ()>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<() -> ()>
module @jit_standardize attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32> {jax.result_info = "result"}) {
    %cst = arith.constant dense<9.99999997E-7> : tensor<f32>
    %0 = call @standardize(%arg0, %cst) : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
    return %0 : tensor<2x16x64xf32>
  }
  func.func private @standardize(%arg0: tensor<2x16x64xf32>, %arg1: tensor<f32>) -> tensor<2x16x64xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x16xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%1 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_6 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_6[] : tensor<f32>
      %extracted_7 = tensor.extract %from_elements[] : tensor<f32>
      %41 = arith.addf %extracted, %extracted_7 : f32
      %from_elements_8 = tensor.from_elements %41 : tensor<f32>
      %extracted_9 = tensor.extract %from_elements_8[] : tensor<f32>
      linalg.yield %extracted_9 : f32
    } -> tensor<2x16xf32>
    %3 = tensor.empty() : tensor<2x16x1xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2 : tensor<2x16xf32>) outs(%3 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %cst_1 = arith.constant dense<6.400000e+01> : tensor<f32>
    %5 = tensor.empty() : tensor<2x16x1xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<f32>) outs(%5 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %7 = tensor.empty() : tensor<2x16x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4, %6 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%7 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.divf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %9 = tensor.empty() : tensor<2x16x64xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%9 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.mulf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<2x16xf32>
    %12 = linalg.fill ins(%cst_3 : f32) outs(%11 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%10 : tensor<2x16x64xf32>) outs(%12 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_6 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_6[] : tensor<f32>
      %extracted_7 = tensor.extract %from_elements[] : tensor<f32>
      %41 = arith.addf %extracted, %extracted_7 : f32
      %from_elements_8 = tensor.from_elements %41 : tensor<f32>
      %extracted_9 = tensor.extract %from_elements_8[] : tensor<f32>
      linalg.yield %extracted_9 : f32
    } -> tensor<2x16xf32>
    %14 = tensor.empty() : tensor<2x16x1xf32>
    %15 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<2x16xf32>) outs(%14 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %cst_4 = arith.constant dense<6.400000e+01> : tensor<f32>
    %16 = tensor.empty() : tensor<2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_4 : tensor<f32>) outs(%16 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %18 = tensor.empty() : tensor<2x16x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %17 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%18 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.divf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %20 = tensor.empty() : tensor<2x16x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %8 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%20 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.mulf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %22 = tensor.empty() : tensor<2x16x1xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %21 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%22 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.subf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %cst_5 = arith.constant dense<0> : tensor<i32>
    %24 = call @clip(%23, %cst_5) : (tensor<2x16x1xf32>, tensor<i32>) -> tensor<2x16x1xf32>
    %25 = tensor.empty() : tensor<2x16x64xf32>
    %26 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x16x1xf32>) outs(%25 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %27 = tensor.empty() : tensor<2x16x64xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %26 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%27 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.subf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x64xf32>
    %29 = tensor.empty() : tensor<f32>
    %30 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%arg1 : tensor<f32>) outs(%29 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<f32>
    %31 = tensor.empty() : tensor<2x16x1xf32>
    %32 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30 : tensor<f32>) outs(%31 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %33 = tensor.empty() : tensor<2x16x1xf32>
    %34 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24, %32 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%33 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.addf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %35 = tensor.empty() : tensor<2x16x1xf32>
    %36 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<2x16x1xf32>) outs(%35 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %41 = math.rsqrt %in : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x1xf32>
    %37 = tensor.empty() : tensor<2x16x64xf32>
    %38 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%36 : tensor<2x16x1xf32>) outs(%37 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %39 = tensor.empty() : tensor<2x16x64xf32>
    %40 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%28, %38 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%39 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %41 = arith.mulf %in, %in_6 : f32
      linalg.yield %41 : f32
    } -> tensor<2x16x64xf32>
    return %40 : tensor<2x16x64xf32>
  }
  func.func private @clip(%arg0: tensor<2x16x1xf32>, %arg1: tensor<i32>) -> tensor<2x16x1xf32> {
    %0 = tensor.empty() : tensor<f32>
    %1 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%arg1 : tensor<i32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: i32, %out: f32):
      %6 = arith.sitofp %in : i32 to f32
      linalg.yield %6 : f32
    } -> tensor<f32>
    %2 = tensor.empty() : tensor<2x16x1xf32>
    %3 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<f32>) outs(%2 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %4 = tensor.empty() : tensor<2x16x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3, %arg0 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%4 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.maximumf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<2x16x1xf32>
    return %5 : tensor<2x16x1xf32>
  }
}

