module @jit_layer_norm {
  func.func public @main(%arg0: tensor<2x16x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>) -> tensor<2x16x64xf32> {
    %cst = arith.constant 9.99999997E-7 : f32
    %cst_0 = arith.constant 6.400000e+01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x16xf32>
    %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%1 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.addf %out, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x16xf32>
    %expanded = tensor.expand_shape %2 [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
    %3 = tensor.empty() : tensor<2x16x1xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x16x1xf32>) outs(%3 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.divf %in, %cst_0 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %5 = tensor.empty() : tensor<2x16x64xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x16x64xf32>) outs(%5 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.mulf %in, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x64xf32>
    %7 = tensor.empty() : tensor<2x16xf32>
    %8 = linalg.fill ins(%cst_1 : f32) outs(%7 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%6 : tensor<2x16x64xf32>) outs(%8 : tensor<2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.addf %out, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x16xf32>
    %expanded_2 = tensor.expand_shape %9 [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
    %10 = tensor.empty() : tensor<2x16x1xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_2 : tensor<2x16x1xf32>) outs(%10 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.divf %in, %cst_0 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %12 = tensor.empty() : tensor<2x16x1xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<2x16x1xf32>) outs(%12 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.mulf %in, %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %14 = tensor.empty() : tensor<2x16x1xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %13 : tensor<2x16x1xf32>, tensor<2x16x1xf32>) outs(%14 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %38 = arith.subf %in, %in_3 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %16 = tensor.empty() : tensor<2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<2x16x1xf32>) outs(%16 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.maximumf %in, %cst_1 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %18 = tensor.empty() : tensor<2x16x64xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<2x16x1xf32>) outs(%18 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %20 = tensor.empty() : tensor<2x16x64xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %19 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%20 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %38 = arith.subf %in, %in_3 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x64xf32>
    %22 = tensor.empty() : tensor<2x16x1xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<2x16x1xf32>) outs(%22 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.addf %in, %cst : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %24 = tensor.empty() : tensor<2x16x1xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<2x16x1xf32>) outs(%24 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = math.rsqrt %in : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x1xf32>
    %26 = tensor.empty() : tensor<2x16x64xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<2x16x1xf32>) outs(%26 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %28 = tensor.empty() : tensor<2x16x64xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %27 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%28 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %38 = arith.mulf %in, %in_3 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x64xf32>
    %30 = tensor.empty() : tensor<2x16x64xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<64xf32>) outs(%30 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %32 = tensor.empty() : tensor<2x16x64xf32>
    %33 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29, %31 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%32 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %38 = arith.mulf %in, %in_3 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x64xf32>
    %34 = tensor.empty() : tensor<2x16x64xf32>
    %35 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2 : tensor<64xf32>) outs(%34 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x64xf32>
    %36 = tensor.empty() : tensor<2x16x64xf32>
    %37 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%33, %35 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%36 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %38 = arith.addf %in, %in_3 : f32
      linalg.yield %38 : f32
    } -> tensor<2x16x64xf32>
    return %37 : tensor<2x16x64xf32>
  }
}