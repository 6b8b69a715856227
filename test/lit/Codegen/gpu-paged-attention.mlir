// The GPU form of paged_attn: a block per (sequence, query head) and, for
// tables of more than 512 tokens, per partition of 512 of them; its
// threads, in groups of lanes that split a key's head dim (4 elements a
// lane, then every 4 x lanes), write the scores of tokens g, g + T / G,
// ... (read through the block table; a token's dot product summed over
// its group by a clustered subgroup reduction) into a row in workgroup
// memory; the block reduces the row's max, makes each score's e = exp(score
// - max) once in place and reduces their sum; then a thread per output
// column adds up e times the value column; partitions are combined by a
// second kernel. No [S, tokens] tensor, no
// kernel per loop nest.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=32 report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// A table of 4 blocks of 16 tokens, heads of 64: 16 groups of 16 lanes
// (256 threads), two groups a warp: the loop runs over the tokens of the
// warp's first group, the second taking the token after each, so that a
// warp's lanes take as many; each group 4 tokens, lane k mod 16 writing
// the group's k-th score; GQA (8 query heads on 2), so query head h reads
// kv head h / 4.
// CHECK-LABEL: func.func @paged
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[S:.*]], %[[H:.*]]) in (3, 8) shared_outs({{.*}}) -> (tensor<3x8x64xf32>)
// CHECK:           %[[KV:.*]] = arith.divui %[[H]], %c4
// CHECK:           %[[ROW:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<256xf32>
// CHECK:           %[[SCORES:.*]] = scf.forall (%[[T:.*]]) in (256) shared_outs(%[[ALL:.*]] = %[[ROW]])
// CHECK:             %[[G0:.*]] = arith.divui %[[T]], %c16
// CHECK:             %[[C0:.*]] = arith.remui %[[T]], %c16
// CHECK:             %[[SPREAD:.*]] = arith.muli %[[C0]], %c16
// CHECK:             %[[SLOT:.*]] = arith.addi %[[G0]], %[[SPREAD]]
// CHECK:             %[[MINE:.*]] = tensor.extract_slice %[[ALL]][%[[SLOT]]] [1] [256]
// CHECK:             %[[G:.*]] = arith.divui %[[T]], %c16
// CHECK:             %[[C:.*]] = arith.remui %[[T]], %c16
// CHECK:             %[[COL:.*]] = arith.muli %[[C]], %c4
// CHECK:             %[[IN_WARP:.*]] = arith.remui %[[G]], %c2
// CHECK:             scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK:               %[[TOKEN:.*]] = arith.addi %[[FIRST]], %[[IN_WARP]]
// CHECK:               arith.minui %[[TOKEN]]
// CHECK:               tensor.extract %{{.*}}[%[[S]], %{{.*}}] : tensor<3x4xi32>
// CHECK:               scf.for %{{.*}} = %[[COL]] to %c64{{.*}} step %c64{{.*}} -> (vector<4xf32>)
// CHECK:                 vector.transfer_read %{{.*}}[%{{.*}}, %[[KV]], %{{.*}}, %{{.*}}]{{.*}} : tensor<10x2x16x64xf32>, vector<4xf32>
// CHECK:                 vector.fma
// CHECK:               gpu.subgroup_reduce add %{{.*}} uniform cluster(size = 16) : (f32) -> f32
// CHECK:               scf.if
// CHECK:                 tensor.insert
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[ALL]][%[[SLOT]]] [1] [256]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// The row's max over the live slots (a block reduction), then each
// thread's slots' e = exp(score - max) in place, once a token, and their
// sum (a block reduction); then a thread per column adds e times its
// value column, with no exponential.
// CHECK:           scf.forall (%{{.*}}) in (256)
// CHECK:             tensor.extract %[[SCORES]]
// CHECK:             gpu.all_reduce maximumf
// CHECK:           %[[MAX:.*]] = tensor.extract %{{.*}}[%c0{{.*}}] : tensor<256xf32>
// CHECK:           %[[E:.*]] = scf.forall (%{{.*}}) in (256) shared_outs(%{{.*}} = %[[SCORES]])
// CHECK:               arith.subf %{{.*}}, %[[MAX]]
// CHECK:               math.exp
// CHECK:           scf.forall (%{{.*}}) in (256)
// CHECK:             tensor.extract %[[E]]
// CHECK:             gpu.all_reduce add
// CHECK:           %[[SUM:.*]] = tensor.extract %{{.*}}[%c0{{.*}}] : tensor<256xf32>
// CHECK:           %[[OUT:.*]] = tensor.extract_slice %{{.*}}[%[[S]], %[[H]], 0] [1, 1, 64] [1, 1, 1] : tensor<3x8x64xf32> to tensor<64xf32>
// CHECK:           scf.forall (%[[J:.*]]) in (64) shared_outs(%{{.*}} = %[[OUT]])
// CHECK-NOT:         math.exp
// CHECK:             scf.for {{.*}} -> (f32)
// CHECK:               tensor.extract %[[E]]
// CHECK:               tensor.extract %{{.*}}[%{{.*}}, %[[KV]], %{{.*}}, %[[J]]] : tensor<10x2x16x64xf32>
// CHECK:               math.fma
// CHECK:             arith.divf %{{.*}}, %[[SUM]]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @paged(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}

// -----

// A table of 640 tokens: two partitions of 512, a block each; 256 threads
// in 128 groups of 2 lanes (heads of 40: 5 steps of 4 a lane), each group 4
// tokens, each thread 2 of the row of 512 scores; f16 computed in f32.
// Each partition's block writes its 40 column sums, its max and its sum
// (42 threads); a block per (sequence, head) combines them.
// CHECK-LABEL: func.func @long_half
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %[[P:.*]]) in (2, 4, 2) shared_outs({{.*}}) -> (tensor<2x4x2x42xf32>)
// CHECK:           %[[LO:.*]] = arith.muli %[[P]], %c512
// CHECK:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<512xf32>
// CHECK:           scf.forall (%[[T:.*]]) in (256)
// CHECK:             tensor.extract_slice %{{.*}}[%{{.*}}] [2] [256]
// CHECK:             arith.addi %[[LO]], %{{.*}}
// CHECK:               scf.for %{{.*}} = %{{.*}} to %c40{{.*}} step %c8
// CHECK:                 arith.extf {{.*}} : vector<4xf16> to vector<4xf32>
// CHECK:               gpu.subgroup_reduce add %{{.*}} uniform cluster(size = 2) : (f32) -> f32
// CHECK:           scf.forall (%{{.*}}) in (42)
// CHECK:             arith.minui %{{.*}}, %c39
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs({{.*}}) -> (tensor<2x4x40xf16>)
// CHECK:           scf.forall (%{{.*}}) in (40)
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step
// CHECK:               arith.maximumf
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step
// CHECK:               math.exp
// CHECK:             arith.truncf {{.*}} : f32 to f16
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @long_half(%q: tensor<2x4x40xf16>, %kc: tensor<90x4x16x40xf16>, %bt: tensor<2x40xi32>, %cl: tensor<2xi32>) -> tensor<2x4x40xf16> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<2x4x40xf16>, tensor<90x4x16x40xf16>, tensor<90x4x16x40xf16>, tensor<2x40xi32>, tensor<2xi32>) -> tensor<2x4x40xf16>
  return %o : tensor<2x4x40xf16>
}

// -----

// A table of 16,384 tokens: 32 partitions.
// CHECK-LABEL: func.func @long_table
// CHECK:         scf.forall ({{.*}}) in (1, 2, 32)
func.func @long_table(%q: tensor<1x2x16xf32>, %kc: tensor<1024x2x16x16xf32>, %bt: tensor<1x1024xi32>, %cl: tensor<1xi32>) -> tensor<1x2x16xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<1x2x16xf32>, tensor<1024x2x16x16xf32>, tensor<1024x2x16x16xf32>, tensor<1x1024xi32>, tensor<1xi32>) -> tensor<1x2x16xf32>
  return %o : tensor<1x2x16xf32>
}

// -----

// Declined, and lowered as decomposed (with max-threads=32 here): value
// rows wider than max-threads (a thread a column; @long_half's partitions
// need two more), more than 65,535 sequences.
// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: the output needs 64 threads (a column each), more than max-threads (32)
// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: the output needs 42 threads (a column each, and two for a partition's max and sum), more than max-threads (32)
// REPORT-NOT: remark: {{.*}} @long_table
func.func @wide_rows(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}

// -----

// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: more than 65,535 sequences or query heads (the grid's z and y)
func.func @many_sequences(%q: tensor<70000x1x16xf32>, %kc: tensor<4x1x4x16xf32>, %bt: tensor<70000x1xi32>, %cl: tensor<70000xi32>) -> tensor<70000x1x16xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 4 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<70000x1x16xf32>, tensor<4x1x4x16xf32>, tensor<4x1x4x16xf32>, tensor<70000x1xi32>, tensor<70000xi32>) -> tensor<70000x1x16xf32>
  return %o : tensor<70000x1x16xf32>
}
