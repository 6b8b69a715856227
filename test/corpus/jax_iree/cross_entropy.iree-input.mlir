module @jit_cross_entropy {
  func.func public @main(%arg0: tensor<8x10xf32>, %arg1: tensor<8xi32>) -> tensor<f32> {
    %cst = arith.constant 8.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0x7F800000 : f32
    %cst_2 = arith.constant 0xFF800000 : f32
    %cst_3 = arith.constant 0x7FC00000 : f32
    %c9 = arith.constant 9 : index
    %c0 = arith.constant 0 : index
    %true = arith.constant true
    %c9_i32 = arith.constant 9 : i32
    %c10_i32 = arith.constant 10 : i32
    %c0_i32 = arith.constant 0 : i32
    %expanded = tensor.expand_shape %arg1 [[0, 1]] output_shape [8, 1] : tensor<8xi32> into tensor<8x1xi32>
    %0 = tensor.empty() : tensor<8x1xi1>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<8x1xi32>) outs(%0 : tensor<8x1xi1>) {
    ^bb0(%in: i32, %out: i1):
      %48 = arith.cmpi slt, %in, %c0_i32 : i32
      linalg.yield %48 : i1
    } -> tensor<8x1xi1>
    %2 = tensor.empty() : tensor<8x1xi32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<8x1xi32>) outs(%2 : tensor<8x1xi32>) {
    ^bb0(%in: i32, %out: i32):
      %48 = arith.addi %in, %c10_i32 : i32
      linalg.yield %48 : i32
    } -> tensor<8x1xi32>
    %4 = tensor.empty() : tensor<8x1xi32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1, %3, %expanded : tensor<8x1xi1>, tensor<8x1xi32>, tensor<8x1xi32>) outs(%4 : tensor<8x1xi32>) {
    ^bb0(%in: i1, %in_5: i32, %in_6: i32, %out: i32):
      %48 = arith.select %in, %in_5, %in_6 : i32
      linalg.yield %48 : i32
    } -> tensor<8x1xi32>
    %expanded_4 = tensor.expand_shape %5 [[0], [1, 2]] output_shape [8, 1, 1] : tensor<8x1xi32> into tensor<8x1x1xi32>
    %6 = tensor.empty() : tensor<8x1x1xi1>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_4 : tensor<8x1x1xi32>) outs(%6 : tensor<8x1x1xi1>) {
    ^bb0(%in: i32, %out: i1):
      %48 = arith.cmpi sge, %in, %c0_i32 : i32
      linalg.yield %48 : i1
    } -> tensor<8x1x1xi1>
    %8 = tensor.empty() : tensor<8x1x1xi1>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_4 : tensor<8x1x1xi32>) outs(%8 : tensor<8x1x1xi1>) {
    ^bb0(%in: i32, %out: i1):
      %48 = arith.cmpi sle, %in, %c9_i32 : i32
      linalg.yield %48 : i1
    } -> tensor<8x1x1xi1>
    %10 = tensor.empty() : tensor<8x1x1xi1>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7, %9 : tensor<8x1x1xi1>, tensor<8x1x1xi1>) outs(%10 : tensor<8x1x1xi1>) {
    ^bb0(%in: i1, %in_5: i1, %out: i1):
      %48 = arith.andi %in, %in_5 : i1
      linalg.yield %48 : i1
    } -> tensor<8x1x1xi1>
    %12 = tensor.empty() : tensor<8x1xi1>
    %13 = linalg.fill ins(%true : i1) outs(%12 : tensor<8x1xi1>) -> tensor<8x1xi1>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%11 : tensor<8x1x1xi1>) outs(%13 : tensor<8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %48 = arith.andi %out, %in : i1
      linalg.yield %48 : i1
    } -> tensor<8x1xi1>
    %15 = tensor.empty() : tensor<8x1xf32>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%15 : tensor<8x1xf32>) {
    ^bb0(%out: f32):
      %48 = linalg.index 0 : index
      %extracted = tensor.extract %expanded_4[%48, %c0, %c0] : tensor<8x1x1xi32>
      %49 = arith.index_cast %extracted : i32 to index
      %50 = arith.maxsi %49, %c0 : index
      %51 = arith.minsi %50, %c9 : index
      %extracted_5 = tensor.extract %arg0[%48, %51] : tensor<8x10xf32>
      linalg.yield %extracted_5 : f32
    } -> tensor<8x1xf32>
    %17 = tensor.empty() : tensor<8x1xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%14, %16 : tensor<8x1xi1>, tensor<8x1xf32>) outs(%17 : tensor<8x1xf32>) {
    ^bb0(%in: i1, %in_5: f32, %out: f32):
      %48 = arith.select %in, %in_5, %cst_3 : f32
      linalg.yield %48 : f32
    } -> tensor<8x1xf32>
    %collapsed = tensor.collapse_shape %18 [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
    %19 = tensor.empty() : tensor<8xf32>
    %20 = linalg.fill ins(%cst_2 : f32) outs(%19 : tensor<8xf32>) -> tensor<8xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x10xf32>) outs(%20 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = arith.maximumf %out, %in : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %22 = tensor.empty() : tensor<8xi1>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%21 : tensor<8xf32>) outs(%22 : tensor<8xi1>) {
    ^bb0(%in: f32, %out: i1):
      %48 = math.absf %in : f32
      %49 = arith.cmpf one, %48, %cst_1 : f32
      linalg.yield %49 : i1
    } -> tensor<8xi1>
    %24 = tensor.empty() : tensor<8xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%23, %21 : tensor<8xi1>, tensor<8xf32>) outs(%24 : tensor<8xf32>) {
    ^bb0(%in: i1, %in_5: f32, %out: f32):
      %48 = arith.select %in, %in_5, %cst_0 : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %26 = tensor.empty() : tensor<8x10xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%25 : tensor<8xf32>) outs(%26 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x10xf32>
    %28 = tensor.empty() : tensor<8x10xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %27 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%28 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %48 = arith.subf %in, %in_5 : f32
      linalg.yield %48 : f32
    } -> tensor<8x10xf32>
    %30 = tensor.empty() : tensor<8x10xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%29 : tensor<8x10xf32>) outs(%30 : tensor<8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = math.exp %in : f32
      linalg.yield %48 : f32
    } -> tensor<8x10xf32>
    %32 = tensor.empty() : tensor<8xf32>
    %33 = linalg.fill ins(%cst_0 : f32) outs(%32 : tensor<8xf32>) -> tensor<8xf32>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%31 : tensor<8x10xf32>) outs(%33 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = arith.addf %out, %in : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %35 = tensor.empty() : tensor<8xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%34 : tensor<8xf32>) outs(%35 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = math.absf %in : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %37 = tensor.empty() : tensor<8xf32>
    %38 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%36 : tensor<8xf32>) outs(%37 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = math.log %in : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %39 = tensor.empty() : tensor<8xf32>
    %40 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%38, %25 : tensor<8xf32>, tensor<8xf32>) outs(%39 : tensor<8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %48 = arith.addf %in, %in_5 : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %41 = tensor.empty() : tensor<8xf32>
    %42 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%40, %collapsed : tensor<8xf32>, tensor<8xf32>) outs(%41 : tensor<8xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %48 = arith.subf %in, %in_5 : f32
      linalg.yield %48 : f32
    } -> tensor<8xf32>
    %43 = tensor.empty() : tensor<f32>
    %44 = linalg.fill ins(%cst_0 : f32) outs(%43 : tensor<f32>) -> tensor<f32>
    %45 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%42 : tensor<8xf32>) outs(%44 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = arith.addf %out, %in : f32
      linalg.yield %48 : f32
    } -> tensor<f32>
    %46 = tensor.empty() : tensor<f32>
    %47 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%45 : tensor<f32>) outs(%46 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %48 = arith.divf %in, %cst : f32
      linalg.yield %48 : f32
    } -> tensor<f32>
    return %47 : tensor<f32>
  }
}