module @jit_einsum_attention {
  func.func public @main(%arg0: tensor<1x4x16x16xf32>, %arg1: tensor<1x4x16x16xf32>, %arg2: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
    %cst = arith.constant 4.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant -3.40282347E+38 : f32
    %cst_2 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x4x16x16xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<1x4x16x16xf32>) outs(%0 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_3 = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %2 = tensor.empty() : tensor<4x16x16xf32>
    %3 = linalg.fill ins(%cst_2 : f32) outs(%2 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %4 = linalg.batch_matmul ins(%collapsed, %collapsed_3 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%3 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded = tensor.expand_shape %4 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    %5 = tensor.empty() : tensor<f32>
    %6 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%5 : tensor<f32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<f32>
    %7 = tensor.empty() : tensor<1x4x16x16xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<f32>) outs(%7 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %9 = tensor.empty() : tensor<1x4x16x16xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %8 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%9 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %40 = arith.divf %in, %in_7 : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16x16xf32>
    %11 = tensor.empty() : tensor<16x16xi32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%11 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %40 = linalg.index 0 : index
      %41 = arith.index_cast %40 : index to i32
      linalg.yield %41 : i32
    } -> tensor<16x16xi32>
    %13 = tensor.empty() : tensor<16x16xi32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%13 : tensor<16x16xi32>) {
    ^bb0(%out: i32):
      %40 = linalg.index 1 : index
      %41 = arith.index_cast %40 : index to i32
      linalg.yield %41 : i32
    } -> tensor<16x16xi32>
    %15 = tensor.empty() : tensor<16x16xi1>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%12, %14 : tensor<16x16xi32>, tensor<16x16xi32>) outs(%15 : tensor<16x16xi1>) {
    ^bb0(%in: i32, %in_7: i32, %out: i1):
      %40 = arith.cmpi sge, %in, %in_7 : i32
      linalg.yield %40 : i1
    } -> tensor<16x16xi1>
    %17 = tensor.empty() : tensor<1x4x16x16xi1>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16 : tensor<16x16xi1>) outs(%17 : tensor<1x4x16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<1x4x16x16xi1>
    %19 = tensor.empty() : tensor<1x4x16x16xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %10 : tensor<1x4x16x16xi1>, tensor<1x4x16x16xf32>) outs(%19 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: i1, %in_7: f32, %out: f32):
      %40 = arith.select %in, %in_7, %cst_1 : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16x16xf32>
    %21 = tensor.empty() : tensor<1x4x16xf32>
    %22 = linalg.fill ins(%cst_0 : f32) outs(%21 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x4x16x16xf32>) outs(%22 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.maximumf %out, %in : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16xf32>
    %24 = tensor.empty() : tensor<1x4x16x16xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x4x16xf32>) outs(%24 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %26 = tensor.empty() : tensor<1x4x16x16xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %25 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%26 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %40 = arith.subf %in, %in_7 : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16x16xf32>
    %28 = tensor.empty() : tensor<1x4x16x16xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x4x16x16xf32>) outs(%28 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = math.exp %in : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16x16xf32>
    %30 = tensor.empty() : tensor<1x4x16xf32>
    %31 = linalg.fill ins(%cst_2 : f32) outs(%30 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%29 : tensor<1x4x16x16xf32>) outs(%31 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.addf %out, %in : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16xf32>
    %33 = tensor.empty() : tensor<1x4x16x16xf32>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32 : tensor<1x4x16xf32>) outs(%33 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %35 = tensor.empty() : tensor<1x4x16x16xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%29, %34 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%35 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %40 = arith.divf %in, %in_7 : f32
      linalg.yield %40 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_4 = tensor.collapse_shape %36 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_5 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %37 = tensor.empty() : tensor<4x16x16xf32>
    %38 = linalg.fill ins(%cst_2 : f32) outs(%37 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %39 = linalg.batch_matmul ins(%collapsed_4, %collapsed_5 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%38 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_6 = tensor.expand_shape %39 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
    return %expanded_6 : tensor<1x4x16x16xf32>
  }
}