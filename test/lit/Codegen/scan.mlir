// The scan schedule: selective_scan with 16 channels in the lanes of a
// vector, the state (N vectors) carried in registers through an scf.for
// over the sequence, an scf.forall over batches and channel vectors.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// 20 channels are padded to 32 (two vectors) and the padding dropped from
// both results; a is read as [N, D]; each step reads its 16 channels' dt
// and u once, and b[t, n], c[t, n] as scalars broadcast to every lane.
// CHECK-LABEL: func.func @scan
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 7, 20] [1, 1, 1] : tensor<2x7x20xf32> into tensor<2x7x32xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<32x4xf32>) outs(%{{.*}} : tensor<4x32xf32>) permutation = [1, 0]
// CHECK:         %[[R:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c7{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<4x16xf32>, tensor<7x16xf32>)
// CHECK:             math.log
// CHECK-COUNT-4:     math.exp %{{.*}} : vector<16xf32>
// CHECK:             vector.transfer_write %{{.*}} : vector<16xf32>, tensor<7x16xf32>
// CHECK:           vector.transpose %{{.*}}, [1, 0] : vector<4x16xf32> to vector<16x4xf32>
// CHECK:         tensor.extract_slice %[[R]]#0[0, 0, 0] [2, 7, 20] [1, 1, 1] : tensor<2x7x32xf32> to tensor<2x7x20xf32>
// CHECK:         tensor.extract_slice %[[R]]#1[0, 0, 0] [2, 20, 4] [1, 1, 1] : tensor<2x32x4xf32> to tensor<2x20x4xf32>
// CHECK-NOT:     fuel.fused
func.func @scan(%u: tensor<2x7x20xf32>, %dl: tensor<2x7x20xf32>, %a: tensor<20x4xf32>,
                %b: tensor<2x7x4xf32>, %c: tensor<2x7x4xf32>) -> (tensor<2x7x20xf32>, tensor<2x20x4xf32>) {
  %y:2 = fuel.fused selective_scan {delta_softplus = true} (%u, %dl, %a, %b, %c) : (tensor<2x7x20xf32>, tensor<2x7x20xf32>, tensor<20x4xf32>, tensor<2x7x4xf32>, tensor<2x7x4xf32>) -> (tensor<2x7x20xf32>, tensor<2x20x4xf32>)
  return %y#0, %y#1 : tensor<2x7x20xf32>, tensor<2x20x4xf32>
}

// -----

// Batches and the sequence dynamic: the forall to the batch count and the
// loop to the sequence length, both read from u; 32 channels, no padding.
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG:     %[[B:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x?x32xf32>
// CHECK-DAG:     %[[L:.*]] = tensor.dim %{{.*}}, %c1{{.*}} : tensor<?x?x32xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%[[B]], 2)
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %[[L]] step %c1{{.*}} iter_args({{.*}}) -> (vector<4x16xf32>, tensor<?x16xf32>)
// CHECK-NOT:     fuel.fused
func.func @dynamic(%u: tensor<?x?x32xf32>, %a: tensor<32x4xf32>, %b: tensor<?x?x4xf32>) -> (tensor<?x?x32xf32>, tensor<?x32x4xf32>) {
  %y:2 = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> (tensor<?x?x32xf32>, tensor<?x32x4xf32>)
  return %y#0, %y#1 : tensor<?x?x32xf32>, tensor<?x32x4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_channels
// CHECK:         fuel.fused selective_scan
// REPORT: not scheduled: the scan schedule needs static channels and state
func.func @dynamic_channels(%u: tensor<1x3x?xf32>, %a: tensor<?x2xf32>, %b: tensor<1x3x2xf32>) -> tensor<1x3x?xf32> {
  %y:2 = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<1x3x?xf32>, tensor<1x3x?xf32>, tensor<?x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x?xf32>, tensor<1x?x2xf32>)
  return %y#0 : tensor<1x3x?xf32>
}

// -----

// Left fused for fuel-decompose, with the reason when asked.
// CHECK-LABEL: func.func @unscheduled
// CHECK-COUNT-2: fuel.fused selective_scan
// REPORT: not scheduled: the scan schedule handles f32, f16 and bf16
// REPORT: not scheduled: the scan schedule needs a sequence, channels and a state of 1 to 128 (got N = 129)
func.func @unscheduled(%u: tensor<1x3x4xf64>, %a: tensor<4x2xf64>, %b: tensor<1x3x2xf64>,
                       %uf: tensor<1x3x4xf32>, %aw: tensor<4x129xf32>, %bw: tensor<1x3x129xf32>)
    -> (tensor<1x3x4xf64>, tensor<1x3x4xf32>) {
  %0:2 = fuel.fused selective_scan (%u, %u, %a, %b, %b) : (tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<4x2xf64>, tensor<1x3x2xf64>, tensor<1x3x2xf64>) -> (tensor<1x3x4xf64>, tensor<1x4x2xf64>)
  %2:2 = fuel.fused selective_scan (%uf, %uf, %aw, %bw, %bw) : (tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<4x129xf32>, tensor<1x3x129xf32>, tensor<1x3x129xf32>) -> (tensor<1x3x4xf32>, tensor<1x4x129xf32>)
  return %0#0, %2#0 : tensor<1x3x4xf64>, tensor<1x3x4xf32>
}

// -----

// ssd_chunk_scan: per (batch, head, 16 of the head's 20 channels, padded to
// 32), the state of 24 in two passes over the sequence, 16 vectors and 8:
// the first writes y's partial sums into an f32 tile, the second adds to
// them and writes y; one scalar exp per step; the padding dropped.
// CHECK-LABEL: func.func @ssd
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 3, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<2x8x3x32xf32>)
// CHECK:           %[[PARTIAL:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK:           %[[FIRST:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[PARTIAL]]) -> (vector<16x16xf32>, tensor<8x16xf32>)
// CHECK:             math.exp %{{.*}} : f32
// CHECK:             vector.fma
// CHECK:           scf.for {{.*}} -> (vector<8x16xf32>, tensor<8x16xf32>)
// CHECK:             vector.transfer_read %[[FIRST]]#1
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 8, 3, 20] [1, 1, 1, 1] : tensor<2x8x3x32xf32> to tensor<2x8x3x20xf32>
func.func @ssd(%x: tensor<2x8x3x20xf32>, %dt: tensor<2x8x3xf32>, %a: tensor<3xf32>, %b: tensor<2x8x3x24xf32>, %c: tensor<2x8x3x24xf32>) -> tensor<2x8x3x20xf32> {
  %y = fuel.fused ssd_chunk_scan {chunk_size = 4 : i64} (%x, %dt, %a, %b, %c) : (tensor<2x8x3x20xf32>, tensor<2x8x3xf32>, tensor<3xf32>, tensor<2x8x3x24xf32>, tensor<2x8x3x24xf32>) -> tensor<2x8x3x20xf32>
  return %y : tensor<2x8x3x20xf32>
}

// -----

// ssd_chunk_scan declines: a dynamic head dim, and a state past 128.
// REPORT: ssd_chunk_scan not scheduled: the scan schedule needs static heads, head dims and state
// REPORT: ssd_chunk_scan not scheduled: the scan schedule needs a sequence, heads, head dims and a state of 1 to 128 (got N = 130)
func.func @ssd_declined(%x: tensor<1x4x2x?xf32>, %dt: tensor<1x4x2xf32>, %a: tensor<2xf32>, %b: tensor<1x4x2x8xf32>, %c: tensor<1x4x2x8xf32>,
                        %x2: tensor<1x4x2x16xf32>, %b2: tensor<1x4x2x130xf32>, %c2: tensor<1x4x2x130xf32>) -> (tensor<1x4x2x?xf32>, tensor<1x4x2x16xf32>) {
  %0 = fuel.fused ssd_chunk_scan {chunk_size = 2 : i64} (%x, %dt, %a, %b, %c) : (tensor<1x4x2x?xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x?xf32>
  %1 = fuel.fused ssd_chunk_scan {chunk_size = 2 : i64} (%x2, %dt, %a, %b2, %c2) : (tensor<1x4x2x16xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x130xf32>, tensor<1x4x2x130xf32>) -> tensor<1x4x2x16xf32>
  return %0, %1 : tensor<1x4x2x?xf32>, tensor<1x4x2x16xf32>
}
