#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> ()>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1, d2) -> (d2)>
#map5 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
module @jit_layer_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>) -> (tensor<2x16x64xf32> {jax.result_info = "result"}) {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x16xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%1 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_7 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_7[] : tensor<f32>
      %extracted_8 = tensor.extract %from_elements[] : tensor<f32>
      %54 = arith.addf %extracted, %extracted_8 : f32
      %from_elements_9 = tensor.from_elements %54 : tensor<f32>
      %extracted_10 = tensor.extract %from_elements_9[] : tensor<f32>
      linalg.yield %extracted_10 : f32
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
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.divf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %9 = tensor.empty() : tensor<2x16x64xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%9 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.mulf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<2x16xf32>
    %12 = linalg.fill ins(%cst_3 : f32) outs(%11 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%10 : tensor<2x16x64xf32>) outs(%12 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_7 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_7[] : tensor<f32>
      %extracted_8 = tensor.extract %from_elements[] : tensor<f32>
      %54 = arith.addf %extracted, %extracted_8 : f32
      %from_elements_9 = tensor.from_elements %54 : tensor<f32>
      %extracted_10 = tensor.extract %from_elements_9[] : tensor<f32>
      linalg.yield %extracted_10 : f32
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
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.divf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %20 = tensor.empty() : tensor<2x16x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %8 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%20 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.mulf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %22 = tensor.empty() : tensor<2x16x1xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %21 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%22 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.subf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %cst_5 = arith.constant dense<0.000000e+00> : tensor<f32>
    %24 = tensor.empty() : tensor<2x16x1xf32>
    %25 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_5 : tensor<f32>) outs(%24 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %26 = tensor.empty() : tensor<2x16x1xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25, %23 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%26 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.maximumf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %28 = tensor.empty() : tensor<2x16x64xf32>
    %29 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x16x1xf32>) outs(%28 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %30 = tensor.empty() : tensor<2x16x64xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %29 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%30 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.subf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x64xf32>
    %cst_6 = arith.constant dense<9.99999997E-7> : tensor<f32>
    %32 = tensor.empty() : tensor<2x16x1xf32>
    %33 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_6 : tensor<f32>) outs(%32 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %34 = tensor.empty() : tensor<2x16x1xf32>
    %35 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%27, %33 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%34 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.addf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %36 = tensor.empty() : tensor<2x16x1xf32>
    %37 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%35 : tensor<2x16x1xf32>) outs(%36 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = math.rsqrt %in : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x1xf32>
    %38 = tensor.empty() : tensor<2x16x64xf32>
    %39 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%37 : tensor<2x16x1xf32>) outs(%38 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %40 = tensor.empty() : tensor<2x16x64xf32>
    %41 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %39 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%40 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.mulf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x64xf32>
    %42 = tensor.empty() : tensor<1x1x64xf32>
    %43 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<64xf32>) outs(%42 : tensor<1x1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x64xf32>
    %44 = tensor.empty() : tensor<2x16x64xf32>
    %45 = linalg.generic {indexing_maps = [#map5, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%43 : tensor<1x1x64xf32>) outs(%44 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %46 = tensor.empty() : tensor<2x16x64xf32>
    %47 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%41, %45 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%46 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.mulf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x64xf32>
    %48 = tensor.empty() : tensor<1x1x64xf32>
    %49 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2 : tensor<64xf32>) outs(%48 : tensor<1x1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x64xf32>
    %50 = tensor.empty() : tensor<2x16x64xf32>
    %51 = linalg.generic {indexing_maps = [#map5, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%49 : tensor<1x1x64xf32>) outs(%50 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %52 = tensor.empty() : tensor<2x16x64xf32>
    %53 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%47, %51 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%52 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %54 = arith.addf %in, %in_7 : f32
      linalg.yield %54 : f32
    } -> tensor<2x16x64xf32>
    return %53 : tensor<2x16x64xf32>
  }
}

