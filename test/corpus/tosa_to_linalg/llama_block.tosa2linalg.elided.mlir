#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (0, 0, 0)>
#map2 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>
#map7 = affine_map<(d0, d1) -> (d0, d1)>
#map8 = affine_map<(d0, d1) -> (0, d1)>
#map9 = affine_map<(d0, d1) -> (d0, 0)>
#map10 = affine_map<(d0, d1) -> (0, 0)>
#map11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @llama_block(%arg0: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant -3.40282347E+38 : f32
    %cst_1 = arith.constant dense<[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15]]> : tensor<16x1xi64>
    %cst_2 = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<1x16xi64>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %cst_4 = arith.constant dense<0xFF800000> : tensor<16x16xf32>
    %cst_5 = arith.constant dense<2.000000e+00> : tensor<1x1x1xf32>
    %cst_6 = arith.constant dense<1.562500e-02> : tensor<1x1x1xf32>
    %cst_7 = arith.constant dense<9.99999997E-7> : tensor<1x1x1xf32>
    %cst_8 = arith.constant dense_resource<torch_tensor_64_torch.float32> : tensor<1x1x64xf32>
    %cst_9 = arith.constant dense_resource<__elided__> : tensor<1x64x64xf32>
    %cst_10 = arith.constant dense_resource<__elided__> : tensor<1x64x64xf32>
    %cst_11 = arith.constant dense_resource<__elided__> : tensor<1x64x64xf32>
    %cst_12 = arith.constant dense_resource<torch_tensor_16_16_torch.float32> : tensor<1x1x16x16xf32>
    %cst_13 = arith.constant dense_resource<torch_tensor_16_16_torch.float32_1> : tensor<1x1x16x16xf32>
    %cst_14 = arith.constant dense<2.500000e-01> : tensor<1x1x1x1xf32>
    %cst_15 = arith.constant dense<1> : tensor<1x1xi64>
    %cst_16 = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
    %cst_17 = arith.constant dense_resource<__elided__> : tensor<1x64x64xf32>
    %cst_18 = arith.constant dense_resource<torch_tensor_64_torch.float32_1> : tensor<1x1x64xf32>
    %cst_19 = arith.constant dense_resource<__elided__> : tensor<1x64x128xf32>
    %cst_20 = arith.constant dense_resource<__elided__> : tensor<1x64x128xf32>
    %cst_21 = arith.constant dense_resource<__elided__> : tensor<1x128x64xf32>
    %0 = tensor.empty() : tensor<2x16x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %cst_5 : tensor<2x16x64xf32>, tensor<1x1x1xf32>) outs(%0 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = math.powf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %2 = tensor.empty() : tensor<2x16xf32>
    %3 = linalg.fill ins(%cst_3 : f32) outs(%2 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %reduced = linalg.reduce ins(%1 : tensor<2x16x64xf32>) outs(%3 : tensor<2x16xf32>) dimensions = [2] 
      (%in: f32, %init: f32) {
        %116 = arith.addf %in, %init : f32
        linalg.yield %116 : f32
      }
    %expanded = tensor.expand_shape %reduced [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
    %4 = tensor.empty() : tensor<2x16x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %cst_6 : tensor<2x16x1xf32>, tensor<1x1x1xf32>) outs(%4 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %6 = tensor.empty() : tensor<2x16x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_7 : tensor<2x16x1xf32>, tensor<1x1x1xf32>) outs(%6 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %8 = tensor.empty() : tensor<2x16x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7 : tensor<2x16x1xf32>) outs(%8 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = math.rsqrt %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %10 = tensor.empty() : tensor<2x16x64xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %9 : tensor<2x16x64xf32>, tensor<2x16x1xf32>) outs(%10 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %12 = tensor.empty() : tensor<2x16x64xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %cst_8 : tensor<2x16x64xf32>, tensor<1x1x64xf32>) outs(%12 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %collapsed = tensor.collapse_shape %13 [[0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
    %expanded_22 = tensor.expand_shape %collapsed [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf32> into tensor<1x32x64xf32>
    %14 = tensor.empty() : tensor<1x32x64xf32>
    %15 = linalg.fill ins(%cst_3 : f32) outs(%14 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %16 = linalg.batch_matmul ins(%expanded_22, %cst_9 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%15 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %collapsed_23 = tensor.collapse_shape %16 [[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
    %expanded_24 = tensor.expand_shape %collapsed_23 [[0, 1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<32x64xf32> into tensor<2x16x4x16xf32>
    %17 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed = linalg.transpose ins(%expanded_24 : tensor<2x16x4x16xf32>) outs(%17 : tensor<2x4x16x16xf32>) permutation = [0, 2, 1, 3] 
    %18 = tensor.empty() : tensor<1x32x64xf32>
    %19 = linalg.fill ins(%cst_3 : f32) outs(%18 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %20 = linalg.batch_matmul ins(%expanded_22, %cst_10 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%19 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %collapsed_25 = tensor.collapse_shape %20 [[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
    %expanded_26 = tensor.expand_shape %collapsed_25 [[0, 1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<32x64xf32> into tensor<2x16x4x16xf32>
    %21 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed_27 = linalg.transpose ins(%expanded_26 : tensor<2x16x4x16xf32>) outs(%21 : tensor<2x4x16x16xf32>) permutation = [0, 2, 1, 3] 
    %22 = tensor.empty() : tensor<1x32x64xf32>
    %23 = linalg.fill ins(%cst_3 : f32) outs(%22 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %24 = linalg.batch_matmul ins(%expanded_22, %cst_11 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%23 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %collapsed_28 = tensor.collapse_shape %24 [[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
    %expanded_29 = tensor.expand_shape %collapsed_28 [[0, 1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<32x64xf32> into tensor<2x16x4x16xf32>
    %25 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed_30 = linalg.transpose ins(%expanded_29 : tensor<2x16x4x16xf32>) outs(%25 : tensor<2x4x16x16xf32>) permutation = [0, 2, 1, 3] 
    %26 = tensor.empty() : tensor<2x4x16x16xf32>
    %27 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed, %cst_12 : tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%26 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %extracted_slice = tensor.extract_slice %transposed[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %extracted_slice_31 = tensor.extract_slice %transposed[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %28 = tensor.empty() : tensor<2x4x16x8xf32>
    %29 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_31 : tensor<2x4x16x8xf32>) outs(%28 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = arith.negf %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x8xf32>
    %30 = tensor.empty() : tensor<2x4x16x16xf32>
    %inserted_slice = tensor.insert_slice %29 into %30[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> into tensor<2x4x16x16xf32>
    %inserted_slice_32 = tensor.insert_slice %extracted_slice into %inserted_slice[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> into tensor<2x4x16x16xf32>
    %31 = tensor.empty() : tensor<2x4x16x16xf32>
    %32 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%inserted_slice_32, %cst_13 : tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%31 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %33 = tensor.empty() : tensor<2x4x16x16xf32>
    %34 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %32 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%33 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %35 = tensor.empty() : tensor<2x4x16x16xf32>
    %36 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_27, %cst_12 : tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%35 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %extracted_slice_33 = tensor.extract_slice %transposed_27[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %extracted_slice_34 = tensor.extract_slice %transposed_27[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
    %37 = tensor.empty() : tensor<2x4x16x8xf32>
    %38 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_34 : tensor<2x4x16x8xf32>) outs(%37 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = arith.negf %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x8xf32>
    %39 = tensor.empty() : tensor<2x4x16x16xf32>
    %inserted_slice_35 = tensor.insert_slice %38 into %39[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> into tensor<2x4x16x16xf32>
    %inserted_slice_36 = tensor.insert_slice %extracted_slice_33 into %inserted_slice_35[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> into tensor<2x4x16x16xf32>
    %40 = tensor.empty() : tensor<2x4x16x16xf32>
    %41 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%inserted_slice_36, %cst_13 : tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%40 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %42 = tensor.empty() : tensor<2x4x16x16xf32>
    %43 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %41 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%42 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %44 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed_37 = linalg.transpose ins(%43 : tensor<2x4x16x16xf32>) outs(%44 : tensor<2x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %collapsed_38 = tensor.collapse_shape %34 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %collapsed_39 = tensor.collapse_shape %transposed_37 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %45 = tensor.empty() : tensor<8x16x16xf32>
    %46 = linalg.fill ins(%cst_3 : f32) outs(%45 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %47 = linalg.batch_matmul ins(%collapsed_38, %collapsed_39 : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%46 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %expanded_40 = tensor.expand_shape %47 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
    %48 = tensor.empty() : tensor<2x4x16x16xf32>
    %49 = linalg.generic {indexing_maps = [#map4, #map6, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_40, %cst_14 : tensor<2x4x16x16xf32>, tensor<1x1x1x1xf32>) outs(%48 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %50 = tensor.empty() : tensor<16x1xi32>
    %51 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst_1 : tensor<16x1xi64>) outs(%50 : tensor<16x1xi32>) {
    ^bb0(%in: i64, %out: i32):
      %116 = arith.trunci %in : i64 to i32
      linalg.yield %116 : i32
    } -> tensor<16x1xi32>
    %52 = tensor.empty() : tensor<1x16xi32>
    %53 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst_2 : tensor<1x16xi64>) outs(%52 : tensor<1x16xi32>) {
    ^bb0(%in: i64, %out: i32):
      %116 = arith.trunci %in : i64 to i32
      linalg.yield %116 : i32
    } -> tensor<1x16xi32>
    %54 = tensor.empty() : tensor<16x16xi32>
    %55 = linalg.generic {indexing_maps = [#map8, #map9, #map7], iterator_types = ["parallel", "parallel"]} ins(%53, %51 : tensor<1x16xi32>, tensor<16x1xi32>) outs(%54 : tensor<16x16xi32>) {
    ^bb0(%in: i32, %in_66: i32, %out: i32):
      %116 = arith.subi %in, %in_66 : i32
      linalg.yield %116 : i32
    } -> tensor<16x16xi32>
    %56 = tensor.empty() : tensor<16x16xi64>
    %57 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel", "parallel"]} ins(%55 : tensor<16x16xi32>) outs(%56 : tensor<16x16xi64>) {
    ^bb0(%in: i32, %out: i64):
      %116 = arith.extsi %in : i32 to i64
      linalg.yield %116 : i64
    } -> tensor<16x16xi64>
    %58 = tensor.empty() : tensor<16x16xi1>
    %59 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel", "parallel"]} ins(%57, %cst_15 : tensor<16x16xi64>, tensor<1x1xi64>) outs(%58 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %in_66: i64, %out: i1):
      %116 = arith.cmpi sge, %in, %in_66 : i64
      linalg.yield %116 : i1
    } -> tensor<16x16xi1>
    %60 = tensor.empty() : tensor<16x16xf32>
    %61 = linalg.generic {indexing_maps = [#map7, #map7, #map10, #map7], iterator_types = ["parallel", "parallel"]} ins(%59, %cst_4, %cst_16 : tensor<16x16xi1>, tensor<16x16xf32>, tensor<1x1xf32>) outs(%60 : tensor<16x16xf32>) {
    ^bb0(%in: i1, %in_66: f32, %in_67: f32, %out: f32):
      %116 = arith.select %in, %in_66, %in_67 : f32
      linalg.yield %116 : f32
    } -> tensor<16x16xf32>
    %expanded_41 = tensor.expand_shape %61 [[0, 1, 2], [3]] output_shape [1, 1, 16, 16] : tensor<16x16xf32> into tensor<1x1x16x16xf32>
    %62 = tensor.empty() : tensor<2x4x16x16xf32>
    %63 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%49, %expanded_41 : tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%62 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %64 = tensor.empty() : tensor<2x4x16xf32>
    %65 = linalg.fill ins(%cst_0 : f32) outs(%64 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    %reduced_42 = linalg.reduce ins(%63 : tensor<2x4x16x16xf32>) outs(%65 : tensor<2x4x16xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %116 = arith.maximumf %in, %init : f32
        linalg.yield %116 : f32
      }
    %expanded_43 = tensor.expand_shape %reduced_42 [[0], [1], [2, 3]] output_shape [2, 4, 16, 1] : tensor<2x4x16xf32> into tensor<2x4x16x1xf32>
    %66 = tensor.empty() : tensor<2x4x16x16xf32>
    %67 = linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%63, %expanded_43 : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%66 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.subf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %68 = tensor.empty() : tensor<2x4x16x16xf32>
    %69 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%67 : tensor<2x4x16x16xf32>) outs(%68 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = math.exp %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %70 = tensor.empty() : tensor<2x4x16xf32>
    %71 = linalg.fill ins(%cst_3 : f32) outs(%70 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    %reduced_44 = linalg.reduce ins(%69 : tensor<2x4x16x16xf32>) outs(%71 : tensor<2x4x16xf32>) dimensions = [3] 
      (%in: f32, %init: f32) {
        %116 = arith.addf %in, %init : f32
        linalg.yield %116 : f32
      }
    %expanded_45 = tensor.expand_shape %reduced_44 [[0], [1], [2, 3]] output_shape [2, 4, 16, 1] : tensor<2x4x16xf32> into tensor<2x4x16x1xf32>
    %72 = tensor.empty() : tensor<2x4x16x1xf32>
    %73 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_45 : tensor<2x4x16x1xf32>) outs(%72 : tensor<2x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = arith.divf %cst, %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x1xf32>
    %74 = tensor.empty() : tensor<2x4x16x16xf32>
    %75 = linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%69, %73 : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%74 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x4x16x16xf32>
    %collapsed_46 = tensor.collapse_shape %75 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %collapsed_47 = tensor.collapse_shape %transposed_30 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %76 = tensor.empty() : tensor<8x16x16xf32>
    %77 = linalg.fill ins(%cst_3 : f32) outs(%76 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %78 = linalg.batch_matmul ins(%collapsed_46, %collapsed_47 : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%77 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %expanded_48 = tensor.expand_shape %78 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
    %79 = tensor.empty() : tensor<2x16x4x16xf32>
    %transposed_49 = linalg.transpose ins(%expanded_48 : tensor<2x4x16x16xf32>) outs(%79 : tensor<2x16x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_50 = tensor.collapse_shape %transposed_49 [[0, 1], [2, 3]] : tensor<2x16x4x16xf32> into tensor<32x64xf32>
    %expanded_51 = tensor.expand_shape %collapsed_50 [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf32> into tensor<1x32x64xf32>
    %80 = tensor.empty() : tensor<1x32x64xf32>
    %81 = linalg.fill ins(%cst_3 : f32) outs(%80 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %82 = linalg.batch_matmul ins(%expanded_51, %cst_17 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%81 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %collapsed_52 = tensor.collapse_shape %82 [[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
    %expanded_53 = tensor.expand_shape %collapsed_52 [[0, 1], [2]] output_shape [2, 16, 64] : tensor<32x64xf32> into tensor<2x16x64xf32>
    %83 = tensor.empty() : tensor<2x16x64xf32>
    %84 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded_53 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%83 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %85 = tensor.empty() : tensor<2x16x64xf32>
    %86 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84, %cst_5 : tensor<2x16x64xf32>, tensor<1x1x1xf32>) outs(%85 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = math.powf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %87 = tensor.empty() : tensor<2x16xf32>
    %88 = linalg.fill ins(%cst_3 : f32) outs(%87 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %reduced_54 = linalg.reduce ins(%86 : tensor<2x16x64xf32>) outs(%88 : tensor<2x16xf32>) dimensions = [2] 
      (%in: f32, %init: f32) {
        %116 = arith.addf %in, %init : f32
        linalg.yield %116 : f32
      }
    %expanded_55 = tensor.expand_shape %reduced_54 [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
    %89 = tensor.empty() : tensor<2x16x1xf32>
    %90 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_55, %cst_6 : tensor<2x16x1xf32>, tensor<1x1x1xf32>) outs(%89 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %91 = tensor.empty() : tensor<2x16x1xf32>
    %92 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%90, %cst_7 : tensor<2x16x1xf32>, tensor<1x1x1xf32>) outs(%91 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %93 = tensor.empty() : tensor<2x16x1xf32>
    %94 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%92 : tensor<2x16x1xf32>) outs(%93 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = math.rsqrt %in : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x1xf32>
    %95 = tensor.empty() : tensor<2x16x64xf32>
    %96 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84, %94 : tensor<2x16x64xf32>, tensor<2x16x1xf32>) outs(%95 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %97 = tensor.empty() : tensor<2x16x64xf32>
    %98 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96, %cst_18 : tensor<2x16x64xf32>, tensor<1x1x64xf32>) outs(%97 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    %collapsed_56 = tensor.collapse_shape %98 [[0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
    %expanded_57 = tensor.expand_shape %collapsed_56 [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf32> into tensor<1x32x64xf32>
    %99 = tensor.empty() : tensor<1x32x128xf32>
    %100 = linalg.fill ins(%cst_3 : f32) outs(%99 : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
    %101 = linalg.batch_matmul ins(%expanded_57, %cst_19 : tensor<1x32x64xf32>, tensor<1x64x128xf32>) outs(%100 : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
    %collapsed_58 = tensor.collapse_shape %101 [[0, 1], [2]] : tensor<1x32x128xf32> into tensor<32x128xf32>
    %expanded_59 = tensor.expand_shape %collapsed_58 [[0, 1], [2]] output_shape [2, 16, 128] : tensor<32x128xf32> into tensor<2x16x128xf32>
    %102 = tensor.empty() : tensor<2x16x128xf32>
    %103 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_59 : tensor<2x16x128xf32>) outs(%102 : tensor<2x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %116 = arith.negf %in : f32
      %117 = math.exp %116 : f32
      %118 = arith.addf %117, %cst : f32
      %119 = arith.divf %cst, %118 : f32
      linalg.yield %119 : f32
    } -> tensor<2x16x128xf32>
    %104 = tensor.empty() : tensor<2x16x128xf32>
    %105 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_59, %103 : tensor<2x16x128xf32>, tensor<2x16x128xf32>) outs(%104 : tensor<2x16x128xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x128xf32>
    %106 = tensor.empty() : tensor<1x32x128xf32>
    %107 = linalg.fill ins(%cst_3 : f32) outs(%106 : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
    %108 = linalg.batch_matmul ins(%expanded_57, %cst_20 : tensor<1x32x64xf32>, tensor<1x64x128xf32>) outs(%107 : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
    %collapsed_60 = tensor.collapse_shape %108 [[0, 1], [2]] : tensor<1x32x128xf32> into tensor<32x128xf32>
    %expanded_61 = tensor.expand_shape %collapsed_60 [[0, 1], [2]] output_shape [2, 16, 128] : tensor<32x128xf32> into tensor<2x16x128xf32>
    %109 = tensor.empty() : tensor<2x16x128xf32>
    %110 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%105, %expanded_61 : tensor<2x16x128xf32>, tensor<2x16x128xf32>) outs(%109 : tensor<2x16x128xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.mulf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x128xf32>
    %collapsed_62 = tensor.collapse_shape %110 [[0, 1], [2]] : tensor<2x16x128xf32> into tensor<32x128xf32>
    %expanded_63 = tensor.expand_shape %collapsed_62 [[0, 1], [2]] output_shape [1, 32, 128] : tensor<32x128xf32> into tensor<1x32x128xf32>
    %111 = tensor.empty() : tensor<1x32x64xf32>
    %112 = linalg.fill ins(%cst_3 : f32) outs(%111 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %113 = linalg.batch_matmul ins(%expanded_63, %cst_21 : tensor<1x32x128xf32>, tensor<1x128x64xf32>) outs(%112 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    %collapsed_64 = tensor.collapse_shape %113 [[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
    %expanded_65 = tensor.expand_shape %collapsed_64 [[0, 1], [2]] output_shape [2, 16, 64] : tensor<32x64xf32> into tensor<2x16x64xf32>
    %114 = tensor.empty() : tensor<2x16x64xf32>
    %115 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84, %expanded_65 : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%114 : tensor<2x16x64xf32>) {
    ^bb0(%in: f32, %in_66: f32, %out: f32):
      %116 = arith.addf %in, %in_66 : f32
      linalg.yield %116 : f32
    } -> tensor<2x16x64xf32>
    return %115 : tensor<2x16x64xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_64_torch.float32: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F",
      torch_tensor_16_16_torch.float32: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F41510A3F6B4E733F98B87E3F3CDF7F3FB9FC7F3FACFF7F3FF8FF7F3FFFFF7F3F41510A3F6B4E733F98B87E3F3CDF7F3FB9FC7F3FACFF7F3FF8FF7F3FFFFF7F3F3311D5BEEC7B4E3FA5E57A3FF97C7F3FE5F27F3FB1FE7F3FDFFF7F3FFDFF7F3F3311D5BEEC7B4E3FA5E57A3FF97C7F3FE5F27F3FB1FE7F3FDFFF7F3FFDFF7F3F26707DBF582F153FEF90743F4FD97E3F83E27F3F0DFD7F3FB5FF7F3FF9FF7F3F26707DBF582F153FEF90743F4FD97E3F83E27F3F0DFD7F3FB5FF7F3FF9FF7F3F305527BFB12E9A3EA7CA6B3F69F47D3F94CB7F3FC2FA7F3F7AFF7F3FF3FF7F3F305527BFB12E9A3EA7CA6B3F69F47D3F94CB7F3FC2FA7F3F7AFF7F3FF3FF7F3F2C3C913EE97229BC40A9603F81CE7C3F19AE7F3FCFF77F3F2EFF7F3FEBFF7F3F2C3C913EE97229BC40A9603F81CE7C3F19AE7F3FCFF77F3F2EFF7F3FEBFF7F3FB8CD753F6D3FA4BE3249533FE3677B3F128A7F3F34F47F3FD2FE7F3FE2FF7F3FB8CD753F6D3FA4BE3249533FE3677B3F128A7F3F34F47F3FD2FE7F3FE2FF7F3FBDFF403FBC7419BFB3CC433FEAC0793F815F7F3FF2EF7F3F65FE7F3FD7FF7F3FBDFF403FBC7419BFB3CC433FEAC0793F815F7F3FF2EF7F3F65FE7F3FD7FF7F3FF6FD14BEE59151BF5F5B323F02DA773F652E7F3F08EB7F3FE7FD7F3FCAFF7F3FF6FD14BEE59151BF5F5B323F02DA773F652E7F3F08EB7F3FE7FD7F3FCAFF7F3FD53F69BFA2E674BFD4211F3FA9B3753FC2F67E3F76E57F3F59FD7F3FBCFF7F3FD53F69BFA2E674BFD4211F3FA9B3753FC2F67E3F76E57F3F59FD7F3FBCFF7F3F64CD56BFFBF17FBF41510A3F6A4E733F98B87E3F3CDF7F3FB9FC7F3FACFF7F3F64CD56BFFBF17FBF41510A3F6A4E733F98B87E3F3CDF7F3FB9FC7F3FACFF7F3F7205913B8D9B71BFC03DE83EE4AA703FE8737E3F5BD87F3F09FC7F3F9BFF7F3F7205913B8D9B71BFC03DE83EE4AA703FE8737E3F5BD87F3F09FC7F3F9BFF7F3FD006583F564F4BBFF386B93EC3C96D3FB5287E3FD2D07F3F48FB7F3F87FF7F3FD006583F564F4BBFF386B93EC3C96D3FB5287E3FD2D07F3F48FB7F3F87FF7F3F6F4E683F9DD910BF99F5883EC3AB6A3F00D77D3FA1C87F3F76FA7F3F72FF7F3F6F4E683F9DD910BF99F5883EC3AB6A3F00D77D3FA1C87F3F76FA7F3F72FF7F3FD7040C3E0A0D90BEDF0B2E3EB151673FCC7E7D3FC9BF7F3F94F97F3F5CFF7F3FD7040C3E0A0D90BEDF0B2E3EB151673FCC7E7D3FC9BF7F3F94F97F3F5CFF7F3FE87A42BF9622FE3CAADE903D68BC633F1A207D3F49B67F3FA1F87F3F43FF7F3FE87A42BF9622FE3CAADE903D68BC633F1A207D3F49B67F3FA1F87F3F43FF7F3F",
      torch_tensor_16_16_torch.float32_1: "0x0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000A46A573F3E399F3E7775CC3D5C81013D57D6233C213E4F3B6E12833A60CBA539A46A573F3E399F3E7775CC3D5C81013D57D6233C213E4F3B6E12833A60CBA539B7C7683F1B54173FF96F4B3EC970813D3ED4A33CDD3DCF3B6912033B5FCB253AB7C7683F1B54173FF96F4B3EC970813D3ED4A33CDD3DCF3B6912033B5FCB253AC381103EC209503F6D4E973EC1FFC13D1FB9F53C116E1B3C939B443B0EB1783AC381103EC209503F6D4E973EC1FFC13D1FB9F53C116E1B3C939B443B0EB1783ACFBD41BFDE1D743FD861C73E892E013EDBCB233DCE3C4F3C5812833B5DCBA53ACFBD41BFDE1D743FD861C73E892E013EDBCB233DCE3C4F3C5812833B5DCBA53A107C75BF7FFC7F3F4477F53E1F3C213EF4B64C3D8185813CDED6A33B323ECF3A107C75BF7FFC7F3F4477F53E1F3C213EF4B64C3D8185813CDED6A33B323ECF3A8C0F8FBE4E78723F698C103F6F20413ED19C753D476C9B3C599BC43B06B1F83A8C0F8FBE4E78723F698C103F6F20413ED19C753D476C9B3C599BC43B06B1F83A4630283F6EE84C3F73EB243F51D3603E323E8F3DA652B53CC75FE53BEC11113B4630283F6EE84C3F73EB243F51D3603E323E8F3DA652B53CC75FE53BEC11113B95467D3F7E06133FA6A4373F5226803E50AAA33D8F38CF3C1312033C54CB253B95467D3F7E06133FA6A4373F5226803E50AAA33D8F38CF3C1312033C54CB253B3201D33EEE1F953E1D88483F2EC28F3E3E12B83DF01DE93C3B74133CBB843A3B3201D33EEE1F953E1D88483F2EC28F3E3E12B83DF01DE93C3B74133CBB843A3BF8440BBF9770A9BCA46A573F3F399F3E7675CC3D5C81013D58D6233C213E4F3BF8440BBF9770A9BCA46A573F3F399F3E7675CC3D5C81013D58D6233C213E4F3B5CFF7FBF1F41A9BE2B26643F8C87AE3E72D3E03D6B730E3D6B38343C86F7633B5CFF7FBF1F41A9BE2B26643F8C87AE3E72D3E03D6B730E3D6B38343C86F7633BD85C09BF24911BBF1D9A6E3F2DA9BD3EAC2BF53D1D651B3D719A443CE9B0783BD85C09BF24911BBF1D9A6E3F2DA9BD3EAC2BF53D1D651B3D719A443CE9B0783B2220D73E4C1453BFC0AB763F419ACC3ED0BE043E6A56283D6BFC543C25B5863B2220D73E4C1453BFC0AB763F419ACC3ED0BE043E6A56283D6BFC543C25B5863B72987D3FB3A875BF6F467C3FF556DB3E64E40E3E4747353D575E653CD511913B72987D3FB3A875BF6F467C3FF556DB3E64E40E3E4747353D575E653CD511913B4479263F75E07FBFD55B7F3F85DBE93E4F06193EAE37423D34C0753C846E9B3B4479263F75E07FBFD55B7F3F85DBE93E4F06193EAE37423D34C0753C846E9B3B",
      torch_tensor_64_torch.float32_1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

