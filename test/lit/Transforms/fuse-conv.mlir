// RUN: fuel-opt %s --fuel-fuse -split-input-file | FileCheck %s
// RUN: fuel-opt %s --fuel-fuse="report=near-misses" -split-input-file -verify-diagnostics -o /dev/null

// Convolutions as frontends write them, fused to conv2d with its stride and
// padding recovered from the indexing maps and the padding ops; and near
// misses that must stay as they are.

// torch-mlir: the input padded with zeros, the bias broadcast into the init
// of linalg.conv_2d_nchw_fchw (strided here).
// CHECK-LABEL: func @conv_torch
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x16x16xf32>, %[[W:.+]]: tensor<8x3x3x3xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused conv2d {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} (%[[X]], %[[W]], %[[B]])
// CHECK-NEXT: return %[[Y]]
func.func @conv_torch(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  } : tensor<1x3x16x16xf32> to tensor<1x3x18x18xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %w : tensor<1x3x18x18xf32>, tensor<8x3x3x3xf32>) outs(%bb : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// TOSA lowered to linalg: NCHW transposed to NHWC, padded, convolved with
// an FHWC weight, the result transposed back. The fused op reads the weight
// transposed to FCHW.
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @conv_tosa_nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x10x12xf32>, %[[W:.+]]: tensor<4x3x5x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x3x3x5xf32>
// CHECK-NEXT: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<4x3x5x3xf32>) outs(%[[E]] : tensor<4x3x3x5xf32>) permutation = [0, 3, 1, 2]
// CHECK-NEXT: %[[Y:.+]] = fuel.fused conv2d {padding = array<i64: 1, 2>} (%[[X]], %[[WT]], %[[B]])
// CHECK-NEXT: return %[[Y]]
func.func @conv_tosa_nhwc(%x: tensor<2x3x10x12xf32>, %w: tensor<4x3x5x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x10x12xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<2x10x12x3xf32>
  %xt = linalg.transpose ins(%x : tensor<2x3x10x12xf32>) outs(%e0 : tensor<2x10x12x3xf32>) permutation = [0, 2, 3, 1]
  %padded = tensor.pad %xt low[0, 1, 2, 0] high[0, 1, 2, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  } : tensor<2x10x12x3xf32> to tensor<2x12x16x3xf32>
  %e1 = tensor.empty() : tensor<2x10x12x4xf32>
  %bb = linalg.generic {indexing_maps = [#bias, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<4xf32>) outs(%e1 : tensor<2x10x12x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x10x12x4xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<2x12x16x3xf32>, tensor<4x3x5x3xf32>) outs(%bb : tensor<2x10x12x4xf32>) -> tensor<2x10x12x4xf32>
  %e2 = tensor.empty() : tensor<2x4x10x12xf32>
  %y = linalg.transpose ins(%c : tensor<2x10x12x4xf32>) outs(%e2 : tensor<2x4x10x12xf32>) permutation = [0, 3, 1, 2]
  return %y : tensor<2x4x10x12xf32>
}

// -----

// StableHLO (JAX) lowered to linalg: channels-last throughout, an NHWC input,
// an HWIO (HWCF) weight, the bias added after the convolution. The fused op
// reads input and weight transposed and its result is transposed back.
// CHECK-LABEL: func @conv_nhwc_hwcf
// CHECK-SAME: (%[[X:.+]]: tensor<2x10x12x3xf32>, %[[W:.+]]: tensor<3x5x3x4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<2x10x12x3xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<3x5x3x4xf32>) {{.*}} permutation = [3, 2, 0, 1]
// CHECK: %[[Y:.+]] = fuel.fused conv2d {padding = array<i64: 1, 2>} (%[[XT]], %[[WT]], %[[B]]) {{.*}} -> tensor<2x4x10x12xf32>
// CHECK: %[[YT:.+]] = linalg.transpose ins(%[[Y]] : tensor<2x4x10x12xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK-NEXT: return %[[YT]] : tensor<2x10x12x4xf32>
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_nhwc_hwcf(%x: tensor<2x10x12x3xf32>, %w: tensor<3x5x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x10x12x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 2, 0] high[0, 1, 2, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  } : tensor<2x10x12x3xf32> to tensor<2x12x16x3xf32>
  %e1 = tensor.empty() : tensor<2x10x12x4xf32>
  %init = linalg.fill ins(%cst : f32) outs(%e1 : tensor<2x10x12x4xf32>) -> tensor<2x10x12x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<2x12x16x3xf32>, tensor<3x5x3x4xf32>) outs(%init : tensor<2x10x12x4xf32>) -> tensor<2x10x12x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #bias, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<2x10x12x4xf32>, tensor<4xf32>) outs(%e1 : tensor<2x10x12x4xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %0 = arith.addf %in, %bi : f32
    linalg.yield %0 : f32
  } -> tensor<2x10x12x4xf32>
  return %y : tensor<2x10x12x4xf32>
}

// -----

// A generic with the windows in its indexing maps (strides 1 and 2, no
// padding, no bias), its loops in another order than the recipe's.
#x = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, c, oh + kh, ow * 2 + kw)>
#w = affine_map<(n, oh, ow, f, kh, kw, c) -> (f, c, kh, kw)>
#y = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, f, oh, ow)>
// CHECK-LABEL: func @conv_generic
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x6x9xf32>, %[[W:.+]]: tensor<3x2x3x3xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused conv2d {stride = array<i64: 1, 2>} (%[[X]], %[[W]])
// CHECK-NEXT: return %[[Y]]
func.func @conv_generic(%x: tensor<1x2x6x9xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x6x9xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Padding on the high side that no window reaches (strided): the same as
// symmetric padding.
// CHECK-LABEL: func @conv_pad_high_unread
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x16x16xf32>, %[[W:.+]]: tensor<2x1x3x3xf32>)
// CHECK-NEXT: %[[Y:.+]] = fuel.fused conv2d {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} (%[[X]], %[[W]])
// CHECK-NEXT: return %[[Y]]
func.func @conv_pad_high_unread(%x: tensor<1x1x16x16xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x1x16x16xf32> to tensor<1x1x17x17xf32>
  %e = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %w : tensor<1x1x17x17xf32>, tensor<2x1x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

// Dilated: conv2d has dilation 1.
// CHECK-LABEL: func @conv_dilated
// CHECK-NOT: fuel.fused
func.func @conv_dilated(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // expected-remark @+1 {{fuel-fuse near miss: conv2d: a window is dilated}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) outs(%init : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// Padded on one side only, and the windows reach the padding: not conv2d's
// symmetric padding.
// CHECK-LABEL: func @conv_pad_one_side
// CHECK-NOT: fuel.fused
func.func @conv_pad_one_side(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 2, 0] high[0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x1x8x8xf32> to tensor<1x1x10x8xf32>
  %e = tensor.empty() : tensor<1x1x8x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x8x6xf32>) -> tensor<1x1x8x6xf32>
  // expected-remark @+1 {{fuel-fuse near miss: conv2d: a window's padding is not symmetric}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w : tensor<1x1x10x8xf32>, tensor<1x1x3x3xf32>) outs(%init : tensor<1x1x8x6xf32>) -> tensor<1x1x8x6xf32>
  return %y : tensor<1x1x8x6xf32>
}

// -----

// Padded with ones: conv2d pads with zeros.
// CHECK-LABEL: func @conv_pad_ones
// CHECK-NOT: fuel.fused
func.func @conv_pad_ones(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %one : f32
  } : tensor<1x1x8x8xf32> to tensor<1x1x10x10xf32>
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  // expected-remark @+1 {{fuel-fuse near miss: conv2d: a window's padding is not zero}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w : tensor<1x1x10x10xf32>, tensor<1x1x3x3xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %y : tensor<1x1x8x8xf32>
}

// -----

// A depthwise convolution (each channel its own filter) is a grouped one,
// which conv2d's recipe does not cover: left alone.
// CHECK-LABEL: func @conv_depthwise
// CHECK-NOT: fuel.fused
func.func @conv_depthwise(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4xf32>) -> tensor<1x6x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%init : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %y : tensor<1x6x6x4xf32>
}
