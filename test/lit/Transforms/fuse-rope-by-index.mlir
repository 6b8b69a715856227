// RoPE whose rotate_half is a concat read by index (StableHLO's concatenate
// through torch-mlir) in the body of the op that reads it, as upstream
// elementwise fusion leaves it: an scf.if on index(axis) < half whose arms
// extract -x[..., half:] and x[..., :half]. Arms that read other elements
// are not rotate_half: nothing is fused and the near-miss report says why.
// RUN: fuel-opt %s --split-input-file --fuel-fuse | FileCheck %s
// RUN: fuel-opt %s --split-input-file --fuel-fuse="report=near-misses" \
// RUN:   -verify-diagnostics -o /dev/null

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// CHECK-LABEL: func.func @rope_by_index
// CHECK-NEXT:    %[[R:.*]] = fuel.fused rope (%arg0, %arg1, %arg2) : (tensor<2x4x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @rope_by_index(%x: tensor<2x4x16x16xf32>, %cos: tensor<16x16xf32>, %sin: tensor<16x16xf32>) -> tensor<2x4x16x16xf32> {
  %c8 = arith.constant 8 : index
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
  %0 = tensor.empty() : tensor<2x4x16x8xf32>
  %neg = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<2x4x16x8xf32>) outs(%0 : tensor<2x4x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x4x16x8xf32>
  %1 = tensor.empty() : tensor<2x4x16x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos, %sin : tensor<2x4x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) outs(%1 : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %c: f32, %s: f32, %out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %first = arith.cmpi ult, %i3, %c8 : index
    %rot = scf.if %first -> (f32) {
      %e = tensor.extract %neg[%i0, %i1, %i2, %i3] : tensor<2x4x16x8xf32>
      scf.yield %e : f32
    } else {
      %j = arith.subi %i3, %c8 : index
      %e = tensor.extract %lo[%i0, %i1, %i2, %j] : tensor<2x4x16x8xf32>
      scf.yield %e : f32
    }
    %a = arith.mulf %rot, %s : f32
    %b = arith.mulf %in, %c : f32
    %y = arith.addf %b, %a : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  return %r : tensor<2x4x16x16xf32>
}

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// The second arm reads the lower half at the axis' own index (no offset):
// not a concat of the halves.
// CHECK-LABEL: func.func @second_arm_not_offset
// CHECK-NOT:     fuel.fused
func.func @second_arm_not_offset(%x: tensor<2x4x16x16xf32>, %cos: tensor<16x16xf32>, %sin: tensor<16x16xf32>) -> tensor<2x4x16x16xf32> {
  %c8 = arith.constant 8 : index
  %c7 = arith.constant 7 : index
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x16xf32> to tensor<2x4x16x8xf32>
  %0 = tensor.empty() : tensor<2x4x16x8xf32>
  %neg = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<2x4x16x8xf32>) outs(%0 : tensor<2x4x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x4x16x8xf32>
  %1 = tensor.empty() : tensor<2x4x16x16xf32>
  // expected-remark @below {{fuel-fuse near miss: rope: expected rotate_half's concat, read by index}}
  %r = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos, %sin : tensor<2x4x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) outs(%1 : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %c: f32, %s: f32, %out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %first = arith.cmpi ult, %i3, %c8 : index
    %rot = scf.if %first -> (f32) {
      %e = tensor.extract %neg[%i0, %i1, %i2, %i3] : tensor<2x4x16x8xf32>
      scf.yield %e : f32
    } else {
      %j = arith.subi %i3, %c7 : index
      %e = tensor.extract %lo[%i0, %i1, %i2, %j] : tensor<2x4x16x8xf32>
      scf.yield %e : f32
    }
    %a = arith.mulf %rot, %s : f32
    %b = arith.mulf %in, %c : f32
    %y = arith.addf %b, %a : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  return %r : tensor<2x4x16x16xf32>
}
