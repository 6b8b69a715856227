module @jit_conv2d {
  func.func public @main(%arg0: tensor<1x3x16x16xf32>, %arg1: tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x16x16x3xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x3x16x16xf32>) outs(%0 : tensor<1x16x16x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16x3xf32>
    %2 = tensor.empty() : tensor<3x3x3x8xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d2, d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<8x3x3x3xf32>) outs(%2 : tensor<3x3x3x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<3x3x3x8xf32>
    %4 = tensor.empty() : tensor<1x16x16x8xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32>
    %padded = tensor.pad %1 low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%arg2: index, %arg3: index, %arg4: index, %arg5: index):
      tensor.yield %cst : f32
    } : tensor<1x16x16x3xf32> to tensor<1x18x18x3xf32>
    %6 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %3 : tensor<1x18x18x3xf32>, tensor<3x3x3x8xf32>) outs(%5 : tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32>
    %7 = tensor.empty() : tensor<1x8x16x16xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<1x16x16x8xf32>) outs(%7 : tensor<1x8x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x16x16xf32>
    return %8 : tensor<1x8x16x16xf32>
  }
}