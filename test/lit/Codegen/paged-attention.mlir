// The attention schedule of paged_attn: a (sequence, head) per scf.forall
// iteration; scores of the live tokens (min(context length, the table's
// tokens)) from key rows read as vectors through the block table; the
// softmax over the row of scores in vectors; the values summed as one
// vector. No [S, H, tokens] tensor and no scalar loop over the head dim.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @paged
// CHECK:         scf.forall (%[[S:.*]], %[[H:.*]]) in (3, 8)
// CHECK:           %[[LEN:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:           %[[KVH:.*]] = arith.divui %[[H]], %c4
// CHECK:           %[[LIVE:.*]] = arith.minsi %[[LEN]], %c64
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK:           scf.for %[[T:.*]] = %c0{{.*}} to %[[LIVE]] step %c1
// CHECK:             tensor.extract %{{.*}}[%[[S]], %{{.*}}] : tensor<3x4xi32>
// CHECK:             vector.transfer_read %{{.*}}[%{{.*}}, %[[KVH]], %{{.*}}, %c0{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<10x2x16x64xf32>, vector<64xf32>
// CHECK:             vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK:             tensor.insert %{{.*}} into %{{.*}}[%[[T]]] : tensor<64xf32>
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             arith.maximumf %{{.*}} : vector<16xf32>
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             math.exp %{{.*}} : vector<16xf32>
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             arith.divf %{{.*}} : vector<16xf32>
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %[[LIVE]] step %c1
// CHECK:             arith.mulf %{{.*}} : vector<64xf32>
// CHECK:         scf.forall.in_parallel
// CHECK-NOT:     fuel.fused
func.func @paged(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}

// -----

// Any number of sequences: the loop to q's dynamic dim.
// CHECK-LABEL: func.func @dynamic_sequences
// CHECK:         %[[S:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x8x64xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%[[S]], 8)
// CHECK-NOT:     fuel.fused
func.func @dynamic_sequences(%q: tensor<?x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<?x4xi32>, %cl: tensor<?xi32>) -> tensor<?x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<?x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<?x4xi32>, tensor<?xi32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_blocks
// CHECK:         fuel.fused paged_attn
// REPORT: not scheduled: the attention schedule needs static shapes but for the number of sequences
func.func @dynamic_blocks(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x?xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x?xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}
