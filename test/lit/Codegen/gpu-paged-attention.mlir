// The GPU form of paged_attn: a block per (sequence, query head); its
// threads write the scores of tokens i, i + T, ... (read through the block
// table) into a row in workgroup memory, then a thread per output column
// reads the row's maximum and adds up exp(score - max) and its products
// with the value column. No [S, tokens] tensor, no kernel per loop nest.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=32 report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// A table of 4 blocks of 16 tokens: 64 threads, one token each; GQA (8
// query heads on 2), so query head h reads kv head h / 4.
// CHECK-LABEL: func.func @paged
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[S:.*]], %[[H:.*]]) in (3, 8) shared_outs({{.*}}) -> (tensor<3x8x64xf32>)
// CHECK:           %[[KV:.*]] = arith.divui %[[H]], %c4
// CHECK:           %[[ROW:.*]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64xf32>
// CHECK:           %[[SCORES:.*]] = scf.forall (%[[T:.*]]) in (64) shared_outs(%[[ALL:.*]] = %[[ROW]])
// CHECK:             %[[MINE:.*]] = tensor.extract_slice %[[ALL]][%[[T]]] [1] [64]
// CHECK:             scf.for %{{.*}} = %[[T]] to %{{.*}} step %c64
// CHECK:               tensor.extract %{{.*}}[%[[S]], %{{.*}}] : tensor<3x4xi32>
// CHECK:               scf.for {{.*}} -> (vector<8xf32>)
// CHECK:                 vector.transfer_read %{{.*}}[%{{.*}}, %[[KV]], %{{.*}}, %{{.*}}]
// CHECK:                 vector.fma
// CHECK:               tensor.insert
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[ALL]][%[[T]]] [1] [64]
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           %[[OUT:.*]] = tensor.extract_slice %{{.*}}[%[[S]], %[[H]], 0] [1, 1, 64] [1, 1, 1] : tensor<3x8x64xf32> to tensor<64xf32>
// CHECK:           scf.forall (%[[J:.*]]) in (64) shared_outs(%{{.*}} = %[[OUT]])
// CHECK:             scf.for
// CHECK:               tensor.extract %[[SCORES]]
// CHECK:               arith.maximumf
// CHECK:             scf.for {{.*}} -> (f32, f32)
// CHECK:               tensor.extract %[[SCORES]]
// CHECK:               math.exp
// CHECK:               tensor.extract %{{.*}}[%{{.*}}, %[[KV]], %{{.*}}, %[[J]]] : tensor<10x2x16x64xf32>
// CHECK:               math.fma
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @paged(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}

// -----

// A table of 640 tokens: 256 threads of 3 tokens each (a row of 768
// scores); a head dim of 40 read 8 at a time; f16 computed in f32.
// CHECK-LABEL: func.func @long_half
// CHECK:         bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<768xf32>
// CHECK:         scf.forall (%[[T:.*]]) in (256)
// CHECK:           tensor.extract_slice %{{.*}}[%[[T]]] [3] [256]
// CHECK:           arith.extf {{.*}} : vector<8xf16> to vector<8xf32>
// CHECK:         scf.forall (%{{.*}}) in (40)
// CHECK:           arith.truncf {{.*}} : f32 to f16
func.func @long_half(%q: tensor<2x4x40xf16>, %kc: tensor<90x4x16x40xf16>, %bt: tensor<2x40xi32>, %cl: tensor<2xi32>) -> tensor<2x4x40xf16> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<2x4x40xf16>, tensor<90x4x16x40xf16>, tensor<90x4x16x40xf16>, tensor<2x40xi32>, tensor<2xi32>) -> tensor<2x4x40xf16>
  return %o : tensor<2x4x40xf16>
}

// -----

// Declined, and lowered as decomposed: value rows wider than max-threads
// (a thread a column), more tokens than 48 KiB of scores, more than 65,535
// sequences.
// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: the value rows (64 columns, a thread each) are more than max-threads (32)
func.func @wide_rows(%q: tensor<3x8x64xf32>, %kc: tensor<10x2x16x64xf32>, %bt: tensor<3x4xi32>, %cl: tensor<3xi32>) -> tensor<3x8x64xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<3x8x64xf32>, tensor<10x2x16x64xf32>, tensor<10x2x16x64xf32>, tensor<3x4xi32>, tensor<3xi32>) -> tensor<3x8x64xf32>
  return %o : tensor<3x8x64xf32>
}

// -----

// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: the block table's 16384 tokens need 65536 bytes of scores in workgroup memory, more than 49152
func.func @long_table(%q: tensor<1x2x16xf32>, %kc: tensor<1024x2x16x16xf32>, %bt: tensor<1x1024xi32>, %cl: tensor<1xi32>) -> tensor<1x2x16xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 16 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<1x2x16xf32>, tensor<1024x2x16x16xf32>, tensor<1024x2x16x16xf32>, tensor<1x1024xi32>, tensor<1xi32>) -> tensor<1x2x16xf32>
  return %o : tensor<1x2x16xf32>
}

// -----

// REPORT: remark: fuel-codegen-gpu: paged_attn not scheduled: more than 65,535 sequences (the grid's y)
func.func @many_sequences(%q: tensor<70000x1x16xf32>, %kc: tensor<4x1x4x16xf32>, %bt: tensor<70000x1xi32>, %cl: tensor<70000xi32>) -> tensor<70000x1x16xf32> {
  %o = fuel.fused paged_attn {softmax_scale = 0.125 : f32, block_size = 4 : i64} (%q, %kc, %kc, %bt, %cl) : (tensor<70000x1x16xf32>, tensor<4x1x4x16xf32>, tensor<4x1x4x16xf32>, tensor<70000x1xi32>, tensor<70000xi32>) -> tensor<70000x1x16xf32>
  return %o : tensor<70000x1x16xf32>
}
