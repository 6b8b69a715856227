#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0) -> ()>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0, d1) -> (d0, 0)>
#map5 = affine_map<() -> ()>
#map6 = affine_map<(d0, d1) -> ()>
#map7 = affine_map<(d0, d1, d2) -> ()>
#map8 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map9 = affine_map<(d0, d1, d2) -> (d2)>
#map10 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#map11 = affine_map<(d0, d1, d2) -> (d0, d1)>
module @jit_cross_entropy attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = tensor.empty() : tensor<8x1xi32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<8xi32>) outs(%0 : tensor<8x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x1xi32>
    %2 = call @take_along_axis(%arg0, %1) : (tensor<8x10xf32>, tensor<8x1xi32>) -> tensor<8x1xf32>
    %collapsed = tensor.collapse_shape %2 [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
    %cst = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_0 = arith.constant 0xFF800000 : f32
    %3 = tensor.empty() : tensor<8xf32>
    %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<8xf32>) -> tensor<8xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x10xf32>) outs(%4 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_9 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_9[] : tensor<f32>
      %extracted_10 = tensor.extract %from_elements[] : tensor<f32>
      %40 = arith.maximumf %extracted, %extracted_10 : f32
      %from_elements_11 = tensor.from_elements %40 : tensor<f32>
      %extracted_12 = tensor.extract %from_elements_11[] : tensor<f32>
      linalg.yield %extracted_12 : f32
    } -> tensor<8xf32>
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %6 = tensor.empty() : tensor<8xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel"]} ins(%cst_1 : tensor<f32>) outs(%6 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8xf32>
    %8 = tensor.empty() : tensor<8xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%7, %5 : tensor<8xf32>, tensor<8xf32>) outs(%8 : tensor<8xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %40 = arith.maximumf %in, %in_9 : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %10 = tensor.empty() : tensor<8xi1>
    %11 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%9 : tensor<8xf32>) outs(%10 : tensor<8xi1>) {
    ^bb0(%in: f32, %out: i1):
      %cst_9 = arith.constant 0x7F800000 : f32
      %40 = math.absf %in : f32
      %41 = arith.cmpf one, %40, %cst_9 : f32
      linalg.yield %41 : i1
    } -> tensor<8xi1>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %12 = tensor.empty() : tensor<8xf32>
    %13 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel"]} ins(%cst_2 : tensor<f32>) outs(%12 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8xf32>
    %14 = tensor.empty() : tensor<8xf32>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3], iterator_types = ["parallel"]} ins(%11, %9, %13 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) outs(%14 : tensor<8xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %40 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %16 = tensor.empty() : tensor<8x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<8xf32>) outs(%16 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x1xf32>
    %18 = tensor.empty() : tensor<8x10xf32>
    %19 = linalg.generic {indexing_maps = [#map4, #map1], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<8x1xf32>) outs(%18 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x10xf32>
    %20 = tensor.empty() : tensor<8x10xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg0, %19 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%20 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %40 = arith.subf %in, %in_9 : f32
      linalg.yield %40 : f32
    } -> tensor<8x10xf32>
    %22 = tensor.empty() : tensor<8x10xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%21 : tensor<8x10xf32>) outs(%22 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = math.exp %in : f32
      linalg.yield %40 : f32
    } -> tensor<8x10xf32>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %24 = tensor.empty() : tensor<8xf32>
    %25 = linalg.fill ins(%cst_4 : f32) outs(%24 : tensor<8xf32>) -> tensor<8xf32>
    %26 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "reduction"]} ins(%23 : tensor<8x10xf32>) outs(%25 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_9 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_9[] : tensor<f32>
      %extracted_10 = tensor.extract %from_elements[] : tensor<f32>
      %40 = arith.addf %extracted, %extracted_10 : f32
      %from_elements_11 = tensor.from_elements %40 : tensor<f32>
      %extracted_12 = tensor.extract %from_elements_11[] : tensor<f32>
      linalg.yield %extracted_12 : f32
    } -> tensor<8xf32>
    %27 = tensor.empty() : tensor<8xf32>
    %28 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%26 : tensor<8xf32>) outs(%27 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = math.absf %in : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %29 = tensor.empty() : tensor<8xf32>
    %30 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%28 : tensor<8xf32>) outs(%29 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = math.log %in : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %31 = tensor.empty() : tensor<8xf32>
    %32 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%30, %15 : tensor<8xf32>, tensor<8xf32>) outs(%31 : tensor<8xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %40 = arith.addf %in, %in_9 : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %33 = tensor.empty() : tensor<8xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%32, %collapsed : tensor<8xf32>, tensor<8xf32>) outs(%33 : tensor<8xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %40 = arith.subf %in, %in_9 : f32
      linalg.yield %40 : f32
    } -> tensor<8xf32>
    %cst_5 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_6 = arith.constant 0.000000e+00 : f32
    %35 = tensor.empty() : tensor<f32>
    %36 = linalg.fill ins(%cst_6 : f32) outs(%35 : tensor<f32>) -> tensor<f32>
    %37 = linalg.generic {indexing_maps = [#map3, #map2], iterator_types = ["reduction"]} ins(%34 : tensor<8xf32>) outs(%36 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_9 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_9[] : tensor<f32>
      %extracted_10 = tensor.extract %from_elements[] : tensor<f32>
      %40 = arith.addf %extracted, %extracted_10 : f32
      %from_elements_11 = tensor.from_elements %40 : tensor<f32>
      %extracted_12 = tensor.extract %from_elements_11[] : tensor<f32>
      linalg.yield %extracted_12 : f32
    } -> tensor<f32>
    %cst_7 = arith.constant dense<8.000000e+00> : tensor<f32>
    %38 = tensor.empty() : tensor<f32>
    %cst_8 = arith.constant 8.000000e+00 : f32
    %39 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = []} ins(%37 : tensor<f32>) outs(%38 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.divf %in, %cst_8 : f32
      linalg.yield %40 : f32
    } -> tensor<f32>
    return %39 : tensor<f32>
  }
  func.func private @take_along_axis(%arg0: tensor<8x10xf32>, %arg1: tensor<8x1xi32>) -> tensor<8x1xf32> {
    %cst = arith.constant dense<0> : tensor<i32>
    %0 = tensor.empty() : tensor<8x1xi32>
    %1 = linalg.generic {indexing_maps = [#map6, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst : tensor<i32>) outs(%0 : tensor<8x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x1xi32>
    %2 = tensor.empty() : tensor<8x1xi1>
    %3 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1, %1 : tensor<8x1xi32>, tensor<8x1xi32>) outs(%2 : tensor<8x1xi1>) {
    ^bb0(%in: i32, %in_5: i32, %out: i1):
      %31 = arith.cmpi slt, %in, %in_5 : i32
      linalg.yield %31 : i1
    } -> tensor<8x1xi1>
    %cst_0 = arith.constant dense<10> : tensor<i32>
    %4 = tensor.empty() : tensor<8x1xi32>
    %5 = linalg.generic {indexing_maps = [#map6, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_0 : tensor<i32>) outs(%4 : tensor<8x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x1xi32>
    %6 = tensor.empty() : tensor<8x1xi32>
    %7 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1, %5 : tensor<8x1xi32>, tensor<8x1xi32>) outs(%6 : tensor<8x1xi32>) {
    ^bb0(%in: i32, %in_5: i32, %out: i32):
      %31 = arith.addi %in, %in_5 : i32
      linalg.yield %31 : i32
    } -> tensor<8x1xi32>
    %8 = tensor.empty() : tensor<8x1xi32>
    %9 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %7, %arg1 : tensor<8x1xi1>, tensor<8x1xi32>, tensor<8x1xi32>) outs(%8 : tensor<8x1xi32>) {
    ^bb0(%in: i1, %in_5: i32, %in_6: i32, %out: i32):
      %31 = arith.select %in, %in_5, %in_6 : i32
      linalg.yield %31 : i32
    } -> tensor<8x1xi32>
    %expanded = tensor.expand_shape %9 [[0], [1, 2]] output_shape [8, 1, 1] : tensor<8x1xi32> into tensor<8x1x1xi32>
    %cst_1 = arith.constant dense<9> : tensor<1xi32>
    %cst_2 = arith.constant dense<0> : tensor<i32>
    %10 = tensor.empty() : tensor<8x1x1xi32>
    %11 = linalg.generic {indexing_maps = [#map7, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_2 : tensor<i32>) outs(%10 : tensor<8x1x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x1x1xi32>
    %12 = tensor.empty() : tensor<8x1x1xi1>
    %13 = linalg.generic {indexing_maps = [#map8, #map8, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %11 : tensor<8x1x1xi32>, tensor<8x1x1xi32>) outs(%12 : tensor<8x1x1xi1>) {
    ^bb0(%in: i32, %in_5: i32, %out: i1):
      %31 = arith.cmpi sge, %in, %in_5 : i32
      linalg.yield %31 : i1
    } -> tensor<8x1x1xi1>
    %14 = tensor.empty() : tensor<1x1x1xi32>
    %15 = linalg.generic {indexing_maps = [#map9, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<1xi32>) outs(%14 : tensor<1x1x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<1x1x1xi32>
    %16 = tensor.empty() : tensor<8x1x1xi32>
    %17 = linalg.generic {indexing_maps = [#map10, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<1x1x1xi32>) outs(%16 : tensor<8x1x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<8x1x1xi32>
    %18 = tensor.empty() : tensor<8x1x1xi1>
    %19 = linalg.generic {indexing_maps = [#map8, #map8, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %17 : tensor<8x1x1xi32>, tensor<8x1x1xi32>) outs(%18 : tensor<8x1x1xi1>) {
    ^bb0(%in: i32, %in_5: i32, %out: i1):
      %31 = arith.cmpi sle, %in, %in_5 : i32
      linalg.yield %31 : i1
    } -> tensor<8x1x1xi1>
    %20 = tensor.empty() : tensor<8x1x1xi1>
    %21 = linalg.generic {indexing_maps = [#map8, #map8, #map8], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13, %19 : tensor<8x1x1xi1>, tensor<8x1x1xi1>) outs(%20 : tensor<8x1x1xi1>) {
    ^bb0(%in: i1, %in_5: i1, %out: i1):
      %31 = arith.andi %in, %in_5 : i1
      linalg.yield %31 : i1
    } -> tensor<8x1x1xi1>
    %cst_3 = arith.constant dense<true> : tensor<i1>
    %true = arith.constant true
    %22 = tensor.empty() : tensor<8x1xi1>
    %23 = linalg.fill ins(%true : i1) outs(%22 : tensor<8x1xi1>) -> tensor<8x1xi1>
    %24 = linalg.generic {indexing_maps = [#map8, #map11], iterator_types = ["parallel", "parallel", "reduction"]} ins(%21 : tensor<8x1x1xi1>) outs(%23 : tensor<8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %from_elements = tensor.from_elements %in : tensor<i1>
      %from_elements_5 = tensor.from_elements %out : tensor<i1>
      %extracted = tensor.extract %from_elements_5[] : tensor<i1>
      %extracted_6 = tensor.extract %from_elements[] : tensor<i1>
      %31 = arith.andi %extracted, %extracted_6 : i1
      %from_elements_7 = tensor.from_elements %31 : tensor<i1>
      %extracted_8 = tensor.extract %from_elements_7[] : tensor<i1>
      linalg.yield %extracted_8 : i1
    } -> tensor<8x1xi1>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %25 = tensor.empty() : tensor<8x1xf32>
    %26 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel"]} outs(%25 : tensor<8x1xf32>) {
    ^bb0(%out: f32):
      %31 = linalg.index 0 : index
      %32 = linalg.index 1 : index
      %extracted = tensor.extract %expanded[%31, %32, %c0] : tensor<8x1x1xi32>
      %33 = arith.index_cast %extracted : i32 to index
      %c1_5 = arith.constant 1 : index
      %c10 = arith.constant 10 : index
      %c9 = arith.constant 9 : index
      %34 = arith.maxsi %c0, %33 : index
      %35 = arith.minsi %34, %c9 : index
      %extracted_6 = tensor.extract %arg0[%31, %35] : tensor<8x10xf32>
      linalg.yield %extracted_6 : f32
    } -> tensor<8x1xf32>
    %cst_4 = arith.constant dense<0x7FC00000> : tensor<f32>
    %27 = tensor.empty() : tensor<8x1xf32>
    %28 = linalg.generic {indexing_maps = [#map6, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_4 : tensor<f32>) outs(%27 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x1xf32>
    %29 = tensor.empty() : tensor<8x1xf32>
    %30 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%24, %26, %28 : tensor<8x1xi1>, tensor<8x1xf32>, tensor<8x1xf32>) outs(%29 : tensor<8x1xf32>) {
    ^bb0(%in: i1, %in_5: f32, %in_6: f32, %out: f32):
      %31 = arith.select %in, %in_5, %in_6 : f32
      linalg.yield %31 : f32
    } -> tensor<8x1xf32>
    return %30 : tensor<8x1xf32>
  }
}

