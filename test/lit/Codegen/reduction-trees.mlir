// Float reductions of one vector become halving steps of vector ops (and
// the accumulator last); reductions that keep a dim of more than one lane,
// integer ones and masked ones are left alone.
// RUN: fuel-opt --fuel-vector-reduction-trees %s | FileCheck %s

// A row's partial sums (vector<1x64xf32> to vector<1xf32>, as the row
// schedules leave them): 64 -> 32 -> ... -> 1 lanes, then the init.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME:    (%[[V:.+]]: vector<1x64xf32>, %[[ACC:.+]]: vector<1xf32>)
// CHECK:         %[[FLAT:.+]] = vector.shape_cast %[[V]] : vector<1x64xf32> to vector<64xf32>
// CHECK:         %[[INIT:.+]] = vector.extract %[[ACC]][0] : f32 from vector<1xf32>
// CHECK:         %[[LO:.+]] = vector.extract_strided_slice %[[FLAT]] {offsets = [0], sizes = [32], strides = [1]}
// CHECK:         %[[HI:.+]] = vector.extract_strided_slice %[[FLAT]] {offsets = [32], sizes = [32], strides = [1]}
// CHECK:         %[[S32:.+]] = arith.addf %[[LO]], %[[HI]] : vector<32xf32>
// CHECK-COUNT-4: arith.addf %{{.*}} : vector<{{16|8|4|2}}xf32>
// CHECK:         %[[S1:.+]] = arith.addf %{{.*}} : vector<1xf32>
// CHECK:         %[[LANE:.+]] = vector.extract %[[S1]][0] : f32 from vector<1xf32>
// CHECK:         %[[SUM:.+]] = arith.addf %[[LANE]], %[[INIT]] : f32
// CHECK:         %[[R:.+]] = vector.broadcast %[[SUM]] : f32 to vector<1xf32>
// CHECK-NOT:     vector.multi_reduction
// CHECK-NOT:     vector.reduction
// CHECK:         return %[[R]]
func.func @row_sum(%v: vector<1x64xf32>, %acc: vector<1xf32>) -> vector<1xf32> {
  %0 = vector.multi_reduction <add>, %v, %acc [1] : vector<1x64xf32> to vector<1xf32>
  return %0 : vector<1xf32>
}

// The NaN-propagating maximum, reduced over every dim to a scalar.
// CHECK-LABEL: func.func @row_max
// CHECK:         arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<4xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<2xf32>
// CHECK:         arith.maximumf %{{.*}} : vector<1xf32>
// CHECK:         arith.maximumf %{{.*}} : f32
// CHECK-NOT:     vector.multi_reduction
func.func @row_max(%v: vector<16xf32>, %acc: f32) -> f32 {
  %0 = vector.multi_reduction <maximumf>, %v, %acc [0] : vector<16xf32> to f32
  return %0 : f32
}

// vector.reduction, with and without an accumulator, keeping fastmath; a
// lane count that is not a power of two halves while it is even (12 -> 6
// -> 3), then reduces the three left in order.
// CHECK-LABEL: func.func @reductions
// CHECK:         arith.mulf %{{.*}} fastmath<nnan> : vector<4xf32>
// CHECK:         arith.mulf %{{.*}} fastmath<nnan> : vector<2xf32>
// CHECK:         arith.mulf %{{.*}} fastmath<nnan> : vector<1xf32>
// CHECK:         arith.addf %{{.*}} : vector<6xf16>
// CHECK:         vector.reduction <add>, %{{.*}} : vector<3xf16> into f16
// CHECK:         arith.addf
// CHECK-NOT:     vector.reduction <mul>
func.func @reductions(%v: vector<8xf32>, %h: vector<12xf16>, %a: f16) -> (f32, f16) {
  %0 = vector.reduction <mul>, %v fastmath<nnan> : vector<8xf32> into f32
  %1 = vector.reduction <add>, %h, %a : vector<12xf16> into f16
  return %0, %1 : f32, f16
}

// Left alone: a reduction that keeps 4 rows (upstream's lowering reduces
// those as vectors of 4), integers, two lanes, and a masked reduction.
// CHECK-LABEL: func.func @left_alone
// CHECK:         vector.multi_reduction <add>, %{{.*}} [1] : vector<4x16xf32> to vector<4xf32>
// CHECK:         vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK:         vector.reduction <add>, %{{.*}} : vector<2xf32> into f32
// CHECK:         vector.mask %{{.*}} { vector.reduction <add>, %{{.*}} : vector<16xf32> into f32 }
// CHECK-NOT:     vector.extract_strided_slice
func.func @left_alone(%m: vector<4x16xf32>, %acc: vector<4xf32>, %i: vector<16xi32>,
                      %two: vector<2xf32>, %v: vector<16xf32>, %mask: vector<16xi1>)
    -> (vector<4xf32>, i32, f32, f32) {
  %0 = vector.multi_reduction <add>, %m, %acc [1] : vector<4x16xf32> to vector<4xf32>
  %1 = vector.reduction <add>, %i : vector<16xi32> into i32
  %2 = vector.reduction <add>, %two : vector<2xf32> into f32
  %3 = vector.mask %mask { vector.reduction <add>, %v : vector<16xf32> into f32 } : vector<16xi1> -> f32
  return %0, %1, %2, %3 : vector<4xf32>, i32, f32, f32
}
