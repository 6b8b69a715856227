#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map3 = affine_map<() -> ()>
#map4 = affine_map<(d0, d1, d2, d3) -> ()>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1) -> ()>
#map7 = affine_map<(d0, d1) -> (d0, d1)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map9 = affine_map<(d0, d1, d2) -> ()>
#map10 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map12 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#map13 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
module @jit_einsum_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> (tensor<1x4x16x16xf32> {jax.result_info = "result"}) {
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%1 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.mulf %in, %in_10 : f32
      %43 = arith.addf %out, %42 : f32
      linalg.yield %43 : f32
    } -> tensor<1x4x16x16xf32>
    %cst_0 = arith.constant dense<1.600000e+01> : tensor<f32>
    %3 = tensor.empty() : tensor<f32>
    %cst_1 = arith.constant 1.600000e+01 : f32
    %4 = linalg.generic {indexing_maps = [#map3], iterator_types = []} outs(%3 : tensor<f32>) {
    ^bb0(%out: f32):
      %42 = math.sqrt %cst_1 : f32
      linalg.yield %42 : f32
    } -> tensor<f32>
    %5 = tensor.empty() : tensor<f32>
    %6 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = []} ins(%4 : tensor<f32>) outs(%5 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<f32>
    %7 = tensor.empty() : tensor<1x4x16x16xf32>
    %8 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<f32>) outs(%7 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %9 = tensor.empty() : tensor<1x4x16x16xf32>
    %10 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %8 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%9 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.divf %in, %in_10 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x16xf32>
    %cst_2 = arith.constant dense<true> : tensor<i1>
    %11 = tensor.empty() : tensor<16x16xi1>
    %12 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst_2 : tensor<i1>) outs(%11 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<16x16xi1>
    %13 = call @tril(%12) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_3 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %14 = call @_where(%13, %10, %cst_3) : (tensor<16x16xi1>, tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16x16xf32>
    %cst_4 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_5 = arith.constant 0xFF800000 : f32
    %15 = tensor.empty() : tensor<1x4x16xf32>
    %16 = linalg.fill ins(%cst_5 : f32) outs(%15 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %17 = linalg.generic {indexing_maps = [#map5, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x4x16x16xf32>) outs(%16 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_10 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_10[] : tensor<f32>
      %extracted_11 = tensor.extract %from_elements[] : tensor<f32>
      %42 = arith.maximumf %extracted, %extracted_11 : f32
      %from_elements_12 = tensor.from_elements %42 : tensor<f32>
      %extracted_13 = tensor.extract %from_elements_12[] : tensor<f32>
      linalg.yield %extracted_13 : f32
    } -> tensor<1x4x16xf32>
    %cst_6 = arith.constant dense<0xFF800000> : tensor<f32>
    %18 = tensor.empty() : tensor<1x4x16xf32>
    %19 = linalg.generic {indexing_maps = [#map9, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_6 : tensor<f32>) outs(%18 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16xf32>
    %20 = tensor.empty() : tensor<1x4x16xf32>
    %21 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %17 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%20 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.maximumf %in, %in_10 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16xf32>
    %22 = tensor.empty() : tensor<1x4x16x1xf32>
    %23 = linalg.generic {indexing_maps = [#map8, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<1x4x16xf32>) outs(%22 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1xf32>
    %24 = tensor.empty() : tensor<1x4x16x16xf32>
    %25 = linalg.generic {indexing_maps = [#map11, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x4x16x1xf32>) outs(%24 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %26 = tensor.empty() : tensor<1x4x16x16xf32>
    %27 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %25 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%26 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.subf %in, %in_10 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x16xf32>
    %28 = tensor.empty() : tensor<1x4x16x16xf32>
    %29 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x4x16x16xf32>) outs(%28 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %42 = math.exp %in : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x16xf32>
    %cst_7 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_8 = arith.constant 0.000000e+00 : f32
    %30 = tensor.empty() : tensor<1x4x16xf32>
    %31 = linalg.fill ins(%cst_8 : f32) outs(%30 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %32 = linalg.generic {indexing_maps = [#map5, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%29 : tensor<1x4x16x16xf32>) outs(%31 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %from_elements = tensor.from_elements %in : tensor<f32>
      %from_elements_10 = tensor.from_elements %out : tensor<f32>
      %extracted = tensor.extract %from_elements_10[] : tensor<f32>
      %extracted_11 = tensor.extract %from_elements[] : tensor<f32>
      %42 = arith.addf %extracted, %extracted_11 : f32
      %from_elements_12 = tensor.from_elements %42 : tensor<f32>
      %extracted_13 = tensor.extract %from_elements_12[] : tensor<f32>
      linalg.yield %extracted_13 : f32
    } -> tensor<1x4x16xf32>
    %33 = tensor.empty() : tensor<1x4x16x1xf32>
    %34 = linalg.generic {indexing_maps = [#map8, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32 : tensor<1x4x16xf32>) outs(%33 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1xf32>
    %35 = tensor.empty() : tensor<1x4x16x16xf32>
    %36 = linalg.generic {indexing_maps = [#map11, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%34 : tensor<1x4x16x1xf32>) outs(%35 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %37 = tensor.empty() : tensor<1x4x16x16xf32>
    %38 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%29, %36 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%37 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.divf %in, %in_10 : f32
      linalg.yield %42 : f32
    } -> tensor<1x4x16x16xf32>
    %39 = tensor.empty() : tensor<1x4x16x16xf32>
    %cst_9 = arith.constant 0.000000e+00 : f32
    %40 = linalg.fill ins(%cst_9 : f32) outs(%39 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %41 = linalg.generic {indexing_maps = [#map, #map12, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%38, %arg2 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%40 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %42 = arith.mulf %in, %in_10 : f32
      %43 = arith.addf %out, %42 : f32
      linalg.yield %43 : f32
    } -> tensor<1x4x16x16xf32>
    return %41 : tensor<1x4x16x16xf32>
  }
  func.func private @tril(%arg0: tensor<16x16xi1>) -> tensor<16x16xi1> {
    %0 = tensor.empty() : tensor<16x16xi32>
    %1 = linalg.generic {indexing_maps = [#map7], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %14 = linalg.index 0 : index
      %15 = arith.index_cast %14 : index to i32
      linalg.yield %15 : i32
    } -> tensor<16x16xi32>
    %cst = arith.constant dense<0> : tensor<i32>
    %2 = tensor.empty() : tensor<16x16xi32>
    %3 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst : tensor<i32>) outs(%2 : tensor<16x16xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<16x16xi32>
    %4 = tensor.empty() : tensor<16x16xi32>
    %5 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%1, %3 : tensor<16x16xi32>, tensor<16x16xi32>) outs(%4 : tensor<16x16xi32>) {
    ^bb0(%in: i32, %in_1: i32, %out: i32):
      %14 = arith.addi %in, %in_1 : i32
      linalg.yield %14 : i32
    } -> tensor<16x16xi32>
    %6 = tensor.empty() : tensor<16x16xi32>
    %7 = linalg.generic {indexing_maps = [#map7], iterator_types = ["parallel", "parallel"]} outs(%6 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %14 = linalg.index 1 : index
      %15 = arith.index_cast %14 : index to i32
      linalg.yield %15 : i32
    } -> tensor<16x16xi32>
    %8 = tensor.empty() : tensor<16x16xi1>
    %9 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%5, %7 : tensor<16x16xi32>, tensor<16x16xi32>) outs(%8 : tensor<16x16xi1>) {
    ^bb0(%in: i32, %in_1: i32, %out: i1):
      %14 = arith.cmpi sge, %in, %in_1 : i32
      linalg.yield %14 : i1
    } -> tensor<16x16xi1>
    %cst_0 = arith.constant dense<false> : tensor<i1>
    %10 = tensor.empty() : tensor<16x16xi1>
    %11 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst_0 : tensor<i1>) outs(%10 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<16x16xi1>
    %12 = tensor.empty() : tensor<16x16xi1>
    %13 = linalg.generic {indexing_maps = [#map7, #map7, #map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%9, %arg0, %11 : tensor<16x16xi1>, tensor<16x16xi1>, tensor<16x16xi1>) outs(%12 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %in_1: i1, %in_2: i1, %out: i1):
      %14 = arith.select %in, %in_1, %in_2 : i1
      linalg.yield %14 : i1
    } -> tensor<16x16xi1>
    return %13 : tensor<16x16xi1>
  }
  func.func private @_where(%arg0: tensor<16x16xi1>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<f32>) -> tensor<1x4x16x16xf32> {
    %0 = tensor.empty() : tensor<1x4x16x16xi1>
    %1 = linalg.generic {indexing_maps = [#map13, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<16x16xi1>) outs(%0 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<1x4x16x16xi1>
    %2 = tensor.empty() : tensor<1x4x16x16xf32>
    %3 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<f32>) outs(%2 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %4 = tensor.empty() : tensor<1x4x16x16xf32>
    %5 = linalg.generic {indexing_maps = [#map5, #map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %arg1, %3 : tensor<1x4x16x16xi1>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%4 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_0: f32, %in_1: f32, %out: f32):
      %6 = arith.select %in, %in_0, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<1x4x16x16xf32>
    return %5 : tensor<1x4x16x16xf32>
  }
}

