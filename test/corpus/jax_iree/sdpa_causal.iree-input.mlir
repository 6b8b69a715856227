module @jit_sdpa_causal {
  func.func public @main(%arg0: tensor<1x16x4x16xf32>, %arg1: tensor<1x16x4x16xf32>, %arg2: tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32> {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant -2.38197633E+38 : f32
    %cst_1 = arith.constant 2.500000e-01 : f32
    %cst_2 = arith.constant 0.000000e+00 : f32
    %expanded = tensor.expand_shape %arg0 [[0], [1], [2], [3, 4]] output_shape [1, 16, 4, 1, 16] : tensor<1x16x4x16xf32> into tensor<1x16x4x1x16xf32>
    %0 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x16x4x1x16xf32>) outs(%0 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1x16xf32>
    %2 = tensor.empty() : tensor<1x4x16x16xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<1x16x4x16xf32>) outs(%2 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3, 4]] : tensor<1x4x16x1x16xf32> into tensor<4x16x16xf32>
    %collapsed_3 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %4 = tensor.empty() : tensor<4x16x16xf32>
    %5 = linalg.fill ins(%cst_2 : f32) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_3 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%5 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_4 = tensor.expand_shape %6 [[0, 1], [2], [3, 4]] output_shape [1, 4, 16, 1, 16] : tensor<4x16x16xf32> into tensor<1x4x16x1x16xf32>
    %7 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_4 : tensor<1x4x16x1x16xf32>) outs(%7 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.mulf %in, %cst_1 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x16x1x16xf32>
    %9 = tensor.empty() : tensor<16x16xi32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%9 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %46 = linalg.index 0 : index
      %47 = arith.index_cast %46 : index to i32
      linalg.yield %47 : i32
    } -> tensor<16x16xi32>
    %11 = tensor.empty() : tensor<16x16xi32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%11 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %46 = linalg.index 1 : index
      %47 = arith.index_cast %46 : index to i32
      linalg.yield %47 : i32
    } -> tensor<16x16xi32>
    %13 = tensor.empty() : tensor<16x16xi1>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%10, %12 : tensor<16x16xi32>, tensor<16x16xi32>) outs(%13 : tensor<16x16xi1>) {
    ^bb0(%in: i32, %in_11: i32, %out: i1):
      %46 = arith.cmpi sge, %in, %in_11 : i32
      linalg.yield %46 : i1
    } -> tensor<16x16xi1>
    %15 = tensor.empty() : tensor<1x4x16x16xi1>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<16x16xi1>) outs(%15 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<1x4x16x16xi1>
    %17 = tensor.empty() : tensor<1x1x4x16x16xi1>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%16 : tensor<1x4x16x16xi1>) outs(%17 : tensor<1x1x4x16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<1x1x4x16x16xi1>
    %collapsed_5 = tensor.collapse_shape %8 [[0, 1, 2, 3, 4]] : tensor<1x4x16x1x16xf32> into tensor<1024xf32>
    %expanded_6 = tensor.expand_shape %collapsed_5 [[0, 1, 2, 3, 4]] output_shape [1, 1, 4, 16, 16] : tensor<1024xf32> into tensor<1x1x4x16x16xf32>
    %19 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%18, %expanded_6 : tensor<1x1x4x16x16xi1>, tensor<1x1x4x16x16xf32>) outs(%19 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_11: f32, %out: f32):
      %46 = arith.select %in, %in_11, %cst_0 : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16x16xf32>
    %21 = tensor.empty() : tensor<1x1x4x16xf32>
    %22 = linalg.fill ins(%cst : f32) outs(%21 : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x1x4x16x16xf32>) outs(%22 : tensor<1x1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.maximumf %out, %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16xf32>
    %24 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x1x4x16xf32>) outs(%24 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %26 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%20, %25 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%26 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %46 = arith.subf %in, %in_11 : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16x16xf32>
    %28 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x1x4x16x16xf32>) outs(%28 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = math.exp %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16x16xf32>
    %30 = tensor.empty() : tensor<1x1x4x16xf32>
    %31 = linalg.fill ins(%cst_2 : f32) outs(%30 : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%29 : tensor<1x1x4x16x16xf32>) outs(%31 : tensor<1x1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.addf %out, %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16xf32>
    %33 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%32 : tensor<1x1x4x16xf32>) outs(%33 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %35 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%29, %34 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%35 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %46 = arith.divf %in, %in_11 : f32
      linalg.yield %46 : f32
    } -> tensor<1x1x4x16x16xf32>
    %37 = tensor.empty() : tensor<1x4x16x16xf32>
    %38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<1x16x4x16xf32>) outs(%37 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %39 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %40 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%36 : tensor<1x1x4x16x16xf32>) outs(%39 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1x16xf32>
    %collapsed_7 = tensor.collapse_shape %38 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_8 = tensor.collapse_shape %40 [[0, 1], [2], [3, 4]] : tensor<1x4x16x1x16xf32> into tensor<4x16x16xf32>
    %41 = tensor.empty() : tensor<4x16x16xf32>
    %42 = linalg.fill ins(%cst_2 : f32) outs(%41 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %43 = linalg.batch_matmul ins(%collapsed_7, %collapsed_8 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%42 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_9 = tensor.expand_shape %43 [[0, 1], [2], [3, 4]] output_shape [1, 4, 16, 1, 16] : tensor<4x16x16xf32> into tensor<1x4x16x1x16xf32>
    %44 = tensor.empty() : tensor<1x1x16x4x16xf32>
    %45 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4, d0, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_9 : tensor<1x4x16x1x16xf32>) outs(%44 : tensor<1x1x16x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x4x16xf32>
    %collapsed_10 = tensor.collapse_shape %45 [[0], [1, 2], [3], [4]] : tensor<1x1x16x4x16xf32> into tensor<1x16x4x16xf32>
    return %collapsed_10 : tensor<1x16x4x16xf32>
  }
}