module {
  func.func public @loss(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi64>) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c10 = arith.constant 10 : index
    %cst_1 = arith.constant dense<0> : tensor<i64>
    %0 = tensor.empty() : tensor<8xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<8xi64>) -> tensor<8xi64>
    %2 = tensor.empty() : tensor<8xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
    %4:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x10xf32>) outs(%3, %1 : tensor<8xf32>, tensor<8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_3: i64):
      %22 = linalg.index 1 : index
      %23 = arith.index_cast %22 : index to i64
      %24 = arith.maximumf %in, %out : f32
      %25 = arith.cmpf ogt, %in, %out : f32
      %26 = arith.select %25, %23, %out_3 : i64
      linalg.yield %24, %26 : f32, i64
    } -> (tensor<8xf32>, tensor<8xi64>)
    %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
    %5 = tensor.empty() : tensor<8x10xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x10xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %22 = arith.subf %in, %in_3 : f32
      linalg.yield %22 : f32
    } -> tensor<8x10xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<8x10xf32>) outs(%5 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.exp %in : f32
      linalg.yield %22 : f32
    } -> tensor<8x10xf32>
    %8 = tensor.empty() : tensor<8x1xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<8x10xf32>) outs(%9 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.addf %in, %out : f32
      linalg.yield %22 : f32
    } -> tensor<8x1xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<8x1xf32>) outs(%8 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.log %in : f32
      linalg.yield %22 : f32
    } -> tensor<8x1xf32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%6, %11 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %22 = arith.subf %in, %in_3 : f32
      linalg.yield %22 : f32
    } -> tensor<8x10xf32>
    %13 = tensor.empty() : tensor<8xi1>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1 : tensor<8xi64>) outs(%13 : tensor<8xi1>) {
    ^bb0(%in: i64, %out: i1):
      %22 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %22 : i1
    } -> tensor<8xi1>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%14, %arg1, %cst_1 : tensor<8xi1>, tensor<8xi64>, tensor<i64>) outs(%0 : tensor<8xi64>) {
    ^bb0(%in: i1, %in_3: i64, %in_4: i64, %out: i64):
      %22 = arith.select %in, %in_3, %in_4 : i64
      linalg.yield %22 : i64
    } -> tensor<8xi64>
    %expanded_2 = tensor.expand_shape %15 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_2 : tensor<8x1xi64>) outs(%9 : tensor<8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %22 = linalg.index 0 : index
      %23 = arith.index_cast %in : i64 to index
      %24 = arith.cmpi slt, %23, %c10 : index
      cf.assert %24, "index must be smaller than dim size"
      %25 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %25, "index must be larger or equal to 0"
      %extracted = tensor.extract %12[%22, %23] : tensor<8x10xf32>
      linalg.yield %extracted : f32
    } -> tensor<8x1xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<8x1xf32>) outs(%8 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.negf %in : f32
      linalg.yield %22 : f32
    } -> tensor<8x1xf32>
    %collapsed = tensor.collapse_shape %17 [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%14, %collapsed, %cst_1 : tensor<8xi1>, tensor<8xf32>, tensor<i64>) outs(%2 : tensor<8xf32>) {
    ^bb0(%in: i1, %in_3: f32, %in_4: i64, %out: f32):
      %22 = arith.sitofp %in_4 : i64 to f32
      %23 = arith.select %in, %in_3, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<8xf32>
    %19 = tensor.empty() : tensor<f32>
    %20 = linalg.fill ins(%cst_0 : f32) outs(%19 : tensor<f32>) -> tensor<f32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%18 : tensor<8xf32>) outs(%20 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.addf %in, %out : f32
      linalg.yield %22 : f32
    } -> tensor<f32>
    return %21 : tensor<f32>
  }
}