// The GPU form of the scan schedule: a thread per channel, each thread's
// whole state in registers (vectors of one lane) through its loop over the
// sequence; blocks of channels on the grid. No kernel launch per step.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// 300 channels: blocks of 64 (the largest that pads by at most an eighth),
// 5 blocks, 320 channels.
// CHECK-LABEL: func.func @selective
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[B:.*]], %{{.*}}) in (2, 5) {{.*}} -> (tensor<2x64x320xf32>, tensor<2x320x16xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64) {{.*}} -> (tensor<1x64x64xf32>, tensor<1x64x16xf32>)
// CHECK:             scf.for {{.*}} -> (vector<16x1xf32>, tensor<64x1xf32>)
// CHECK:               math.exp {{.*}} : vector<1xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK:         tensor.extract_slice {{.*}} to tensor<2x64x300xf32>
func.func @selective(%u: tensor<2x64x300xf32>, %d: tensor<2x64x300xf32>, %a: tensor<300x16xf32>, %b: tensor<2x64x16xf32>, %c: tensor<2x64x16xf32>) -> (tensor<2x64x300xf32>, tensor<2x300x16xf32>) {
  %y, %s = fuel.fused selective_scan {delta_softplus = true} (%u, %d, %a, %b, %c) : (tensor<2x64x300xf32>, tensor<2x64x300xf32>, tensor<300x16xf32>, tensor<2x64x16xf32>, tensor<2x64x16xf32>) -> (tensor<2x64x300xf32>, tensor<2x300x16xf32>)
  return %y, %s : tensor<2x64x300xf32>, tensor<2x300x16xf32>
}

// -----

// ssd_chunk_scan: a block per (batch, head), a thread per channel of the
// head's P = 64; the state of 128 in one pass (no partial sums of y).
// CHECK-LABEL: func.func @ssd
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 1) {{.*}} -> (tensor<1x32x8x64xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64)
// CHECK:             scf.for {{.*}} -> (vector<128x1xf32>, tensor<32x1xf32>)
// CHECK-NOT:         scf.for {{.*}} -> (vector
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @ssd(%x: tensor<1x32x8x64xf32>, %dt: tensor<1x32x8xf32>, %a: tensor<8xf32>, %b: tensor<1x32x8x128xf32>, %c: tensor<1x32x8x128xf32>) -> tensor<1x32x8x64xf32> {
  %y = fuel.fused ssd_chunk_scan {chunk_size = 32 : i64} (%x, %dt, %a, %b, %c) : (tensor<1x32x8x64xf32>, tensor<1x32x8xf32>, tensor<8xf32>, tensor<1x32x8x128xf32>, tensor<1x32x8x128xf32>) -> tensor<1x32x8x64xf32>
  return %y : tensor<1x32x8x64xf32>
}

// -----

// A state of more than 128 is not scheduled (as on the CPU).
// REPORT: remark: fuel-codegen-gpu: selective_scan not scheduled: the scan schedule needs a sequence, channels and a state of 1 to 128 (got N = 256)
func.func @big_state(%u: tensor<1x8x32xf32>, %a: tensor<32x256xf32>, %b: tensor<1x8x256xf32>) -> (tensor<1x8x32xf32>, tensor<1x32x256xf32>) {
  %y, %s = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<32x256xf32>, tensor<1x8x256xf32>, tensor<1x8x256xf32>) -> (tensor<1x8x32xf32>, tensor<1x32x256xf32>)
  return %y, %s : tensor<1x8x32xf32>, tensor<1x32x256xf32>
}
