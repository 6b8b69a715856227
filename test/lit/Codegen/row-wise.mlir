// The row-wise schedule: softmax, RMS norm and layer norm become one row per
// scf.forall iteration, every step over the row in vectors of 16 lanes.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="vector-width=8" %s \
// RUN:   | FileCheck %s --check-prefix=W8
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="reciprocal=false" %s \
// RUN:   | FileCheck %s --check-prefix=EXACT
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     fuel.fused
// CHECK-NOT:     linalg.generic
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK:         scf.forall (%[[ROW:.*]]) in (8)
// The max: partial maxima in four vectors (independent chains), reduced
// once per row; only subtracted from, then exponentiated, so either zero
// will do (nsz).
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c256{{.*}} step %c64
// CHECK:             arith.maximumf %{{.*}} fastmath<nsz> : vector<1x64xf32>
// CHECK:           vector.multi_reduction <maximumf>, %{{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// The subtract fuses into the exp, which is computed once, into the
// result's row, in the loop that sums it (two partial vectors: the exp's
// constants need registers too); that loop asks for the next row's input
// (the last row's next is itself), one prefetch per 64-byte line.
// CHECK:           %[[NEXT:.*]] = arith.addi %[[ROW]], %c1
// CHECK:           %[[CLAMPED:.*]] = arith.minsi %[[NEXT]], %c7
// CHECK:           scf.for %[[COL:.*]] = %{{.*}} to %c256{{.*}} step %c32
// CHECK:             memref.prefetch %[[BUF]][%[[CLAMPED]], %[[COL]]], read, locality<2>, data
// CHECK-NEXT:        arith.constant 16
// CHECK-NEXT:        arith.addi
// CHECK-NEXT:        memref.prefetch %[[BUF]][%[[CLAMPED]], %{{.*}}], read
// CHECK-NOT:         memref.prefetch
// CHECK:             arith.subf %{{.*}} : vector<1x32xf32>
// CHECK-NEXT:        math.exp %{{.*}} : vector<1x32xf32>
// CHECK:             arith.addf %{{.*}} : vector<1x32xf32>
// CHECK:             scf.yield
// CHECK:           vector.multi_reduction <add>
// One reciprocal of the sum per row; the row is scaled in place by it.
// CHECK:           %[[INV:.*]] = arith.divf %{{.*}} : vector<1xf32>
// CHECK:           scf.for
// CHECK-NOT:         math.exp
// CHECK:             arith.mulf %{{.*}} : vector<1x16xf32>
// CHECK-NOT:       scf.for
// CHECK:         scf.forall.in_parallel
// CHECK-NEXT:      tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[ROW]], 0] [1, 256] [1, 1]
// W8-LABEL:    func.func @softmax
// W8:            math.exp %{{.*}} : vector<1x16xf32>
// EXACT-LABEL: func.func @softmax
// EXACT-NOT:     arith.mulf
// EXACT:         arith.divf %{{.*}} : vector<1x16xf32>
func.func @softmax(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<8x256xf32>) -> tensor<8x256xf32>
  return %y : tensor<8x256xf32>
}

// -----

// Leading dims are rows too; the row statistic (the root of the mean
// square) and its reciprocal are computed once per row, on
// vector<1x1xf32>, not per element.
// CHECK-LABEL: func.func @rms_norm
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 3)
// CHECK:           scf.for
// CHECK:             arith.mulf %{{.*}} : vector<1x1x16xf32>
// CHECK:           vector.multi_reduction <add>
// CHECK:           math.sqrt %{{.*}} : vector<1x1xf32>
// CHECK:           arith.divf %{{.*}} : vector<1x1xf32>
// The last pass reads the row from cache: it asks for the next row's.
// CHECK:           scf.for
// CHECK-NEXT:        memref.prefetch %{{.*}}, read, locality<2>, data
// CHECK-NOT:         math.sqrt
// CHECK:             arith.mulf %{{.*}} : vector<1x1x16xf32>
// CHECK:         return
func.func @rms_norm(%x: tensor<2x3x32xf32>) -> tensor<2x3x32xf32> {
  %y = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  return %y : tensor<2x3x32xf32>
}

// -----

// f16 is computed in f32 inside the row, as decomposed.
// CHECK-LABEL: func.func @layer_norm_f16
// CHECK:         scf.forall
// CHECK:           arith.extf %{{.*}} : vector<1x16xf16> to vector<1x16xf32>
// CHECK:           arith.truncf %{{.*}} : vector<1x16xf32> to vector<1x16xf16>
func.func @layer_norm_f16(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %y = fuel.fused layer_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  return %y : tensor<4x16xf16>
}

// -----

// The backwards and inplace_affine have the schedule too.
// CHECK-LABEL: func.func @backwards
// CHECK-NOT:     linalg.generic
// CHECK-COUNT-2: scf.forall
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @backwards(%y: tensor<4x32xf32>, %g: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = fuel.fused softmax_last_dim_backward (%y, %g) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %1 = fuel.fused inplace_affine {mul = 2.0 : f64, add = 1.0 : f64} (%y) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Scheduling one op touches nothing outside its loop: a later op, even an
// unused one, is still there to be scheduled (a fuzzer-found crash).
// CHECK-LABEL: func.func @dead_candidate
// CHECK-COUNT-2: scf.forall
// CHECK-NOT:     fuel.fused
func.func @dead_candidate(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %a = fuel.fused layer_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %b = fuel.fused softmax_last_dim (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %a : tensor<4x16xf32>
}

// -----

// A row that is not a multiple of the vector width: each pass runs its
// whole steps in vectors and its last, partial step (here 4 of 20) in one
// masked vector: loads and stores under a mask of the row's remaining
// lanes. (Reductions step by one vector when the row is shorter than four.)
// CHECK-LABEL: func.func @partial_step
// CHECK:         scf.forall
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c16
// CHECK:             arith.maximumf %{{.*}} : vector<1x16xf32>
// CHECK:           scf.for %{{.*}} = %c16{{.*}} to %c20{{.*}} step %c16
// CHECK:             %[[MASK:.*]] = vector.create_mask %{{.*}}, %{{.*}} : vector<1x16xi1>
// CHECK:             vector.transfer_read %{{.*}}, %[[MASK]] {{.*}} : tensor<1x?xf32>, vector<1x16xf32>
// CHECK:             arith.maximumf %{{.*}} : vector<1x16xf32>
// CHECK:             vector.transfer_write %{{.*}}, %[[MASK]] {{.*}} : vector<1x16xf32>, tensor<1x?xf32>
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c16
// CHECK:             math.exp %{{.*}} : vector<1x16xf32>
// CHECK:           scf.for %{{.*}} = %c16{{.*}} to %c20{{.*}} step %c16
// CHECK:             vector.create_mask
// CHECK:             math.exp %{{.*}} : vector<1x16xf32>
// CHECK-NOT:       linalg.generic
// CHECK:         scf.forall.in_parallel
func.func @partial_step(%x: tensor<4x20xf32>) -> tensor<4x20xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<4x20xf32>) -> tensor<4x20xf32>
  return %y : tensor<4x20xf32>
}

// -----

// Any number of rows: the loop over rows runs to the input's dynamic dims;
// only the row length must be static. Sizes are read from the input, and
// no full-size op of the decomposition is left next to the loop.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
// CHECK:           arith.mulf %{{.*}} : vector<1x1x64xf32>
func.func @dynamic_rows(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %y = fuel.fused rms_norm_last_dim {eps = 1.0e-05 : f64} (%x) : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Not scheduled, left fused for fuel-decompose, with the reason when asked.
// CHECK-LABEL: func.func @unscheduled
// CHECK-COUNT-4: fuel.fused
// REPORT: not scheduled: the row-wise schedule needs a static row length
// REPORT: not scheduled: the row (12) is shorter than a vector (16)
// REPORT: not scheduled: the row-wise schedule needs rows: a rank of at least 2
// REPORT-NOT: not scheduled
func.func @unscheduled(%d: tensor<4x?xf32>, %short: tensor<4x12xf32>, %flat: tensor<64xf32>,
                       %x: tensor<4x16xf32>, %cs: tensor<4x16xf32>)
    -> (tensor<4x?xf32>, tensor<4x12xf32>, tensor<64xf32>, tensor<4x16xf32>) {
  %0 = fuel.fused softmax_last_dim (%d) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %1 = fuel.fused softmax_last_dim (%short) : (tensor<4x12xf32>) -> tensor<4x12xf32>
  %2 = fuel.fused softmax_last_dim (%flat) : (tensor<64xf32>) -> tensor<64xf32>
  // No schedule at all: not reported.
  %3 = fuel.fused powi_backward {exp = 3 : i32} (%x, %cs) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0, %1, %2, %3 : tensor<4x?xf32>, tensor<4x12xf32>, tensor<64xf32>, tensor<4x16xf32>
}
