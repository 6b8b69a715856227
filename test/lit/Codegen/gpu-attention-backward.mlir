// The GPU schedule of flash_attn's backwards: FlashAttention-2's backward
// with a block per (batch, head, block of rows) and a thread per row. dq:
// a thread per query row computes its lse and D over the key blocks it
// sees, then dq over them again, in steps of 16 keys (staged in workgroup
// memory where the shape allows). dk, dv: a thread per
// query row writes its lse and D ([B, Hq, Sq]), then a thread per key row
// adds up its row of dk or dv over the query blocks that see it (16
// queries a step) and the query heads of its kv head. No [Sq, Sk] scores.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=32 report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// dq with query blocks of 64 rows and a head dim of 32 stages its key and
// value blocks in workgroup memory, as the forward does: in the block's
// body, a key loop whose blocks' keys and values (transposed) are staged
// and each thread's row updates its running max, sum and sum of p * dp;
// each row's lse and D; then a key loop that stages the keys (transposed
// and not) and values, each row adding ds k to its dq. The transposed
// blocks' rows are 20 words apart, not 16 (a warp's stores down a column
// 4-way bank-conflicted, not 16-way).
// CHECK-LABEL: func.func @dq
// CHECK-NOT:     fuel.fused
// CHECK-NOT:     tensor<{{.*}}256x256
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4)
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK:           scf.for {{.*}} step %c16{{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK:             scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<32x20xf32>, tensor<32x20xf32>)
// CHECK:             scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:               math.exp
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>)
// CHECK:             math.log
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x32xf32>)
// CHECK:           scf.for {{.*}} step %c16{{.*}} -> (tensor<64x32xf32>)
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x32xf32>
// CHECK:             scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<32x20xf32>, tensor<32x20xf32>, tensor<16x32xf32>)
// CHECK:             scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x32xf32>)
// CHECK:               math.exp
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x32xf32> into vector<1x32xf32>
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x32xf32>)
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @dq(%q: tensor<1x4x256x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>, %do: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %g = fuel.fused flash_attn_backward_q {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v, %do) : (tensor<1x4x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32>
  return %g : tensor<1x4x256x32xf32>
}

// -----

// A head dim of 64 (dq stages up to 32): a thread per query row with its
// own key loops, reading the keys through the caches.
// CHECK-LABEL: func.func @dq_unstaged
// CHECK-NOT:     workgroup
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4)
// CHECK:           scf.forall (%{{.*}}) in (64)
// The row's lse and D: a running max, sum and sum of p * dp.
// CHECK:             scf.for {{.*}} step %c16{{.*}} -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:             math.log
// Then dq += ds k, a row of 64 in registers.
// CHECK:             scf.for {{.*}} step %c16{{.*}} -> (tensor<1x64xf32>)
// CHECK:               math.exp
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x64xf32> into vector<1x64xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT:     scf.forall
func.func @dq_unstaged(%q: tensor<1x4x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>, %do: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %g = fuel.fused flash_attn_backward_q {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v, %do) : (tensor<1x4x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32>
  return %g : tensor<1x4x256x64xf32>
}

// -----

// A head dim of 64 (dk and dv stage up to 32): every query row's lse and
// D from a kernel of its own, a warp of rows a block, each reading the
// keys through the caches; then a thread per key row reading the queries
// through the caches.
// CHECK-LABEL: func.func @dk
// CHECK-NOT:     workgroup
// CHECK-NOT:     tensor<{{.*}}256x256
// Every query row's lse and D, a warp of rows a block.
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 8) {{.*}} -> (tensor<1x4x256xf32>, tensor<1x4x256xf32>)
// CHECK:           scf.forall (%{{.*}}) in (32)
// CHECK:             math.log
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// A thread per key row: over the 2 query heads of its kv head, then the
// query blocks that see it (causal: from the key's block on).
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 4)
// CHECK:           scf.forall (%{{.*}}) in (64)
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %c2 step %c1{{.*}} -> (tensor<1x64xf32>)
// CHECK:               scf.for {{.*}} step %c16{{.*}} -> (tensor<1x64xf32>)
// CHECK:                 vector.contract {{.*}} : vector<16x16xf32>, vector<16x1xf32> into vector<16x1xf32>
// CHECK:                 math.exp
// CHECK:                 vector.contract {{.*}} : vector<16x1xf32>, vector<16x64xf32> into vector<1x64xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @dk(%q: tensor<1x4x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>, %do: tensor<1x4x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %g = fuel.fused flash_attn_backward_k {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v, %do) : (tensor<1x4x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x4x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %g : tensor<1x2x256x64xf32>
}

// -----

// Heads of 16 (or 8, padded to 16) with too few queries to stage: steps of
// 8 rows, so that a step's blocks ([8, 16] of q and of do for a key row,
// [16, 8] of k^T and v^T for a query row's lse and D) fit in registers
// where [16, 16] ones spilled (ptxas) or took scratch (gfx942).
// CHECK-LABEL: func.func @dk_small_heads
// CHECK:         scf.forall (%{{.*}}) in (16)
// CHECK:           scf.for {{.*}} step %c8{{.*}} -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK:             vector.contract {{.*}} : vector<1x16xf32>, vector<16x8xf32> into vector<1x8xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         scf.forall (%{{.*}}) in (32)
// CHECK:             scf.for {{.*}} step %c8{{.*}} -> (tensor<1x16xf32>)
// CHECK:               vector.contract {{.*}} : vector<8x16xf32>, vector<16x1xf32> into vector<8x1xf32>
// CHECK:               vector.contract {{.*}} : vector<8x1xf32>, vector<8x16xf32> into vector<1x16xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
func.func @dk_small_heads(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x24x16xf32>, %v: tensor<1x2x24x16xf32>, %do: tensor<1x2x16x16xf32>) -> tensor<1x2x24x16xf32> {
  %g = fuel.fused flash_attn_backward_k {softmax_scale = 0.25 : f32, causal = true} (%q, %k, %v, %do) : (tensor<1x2x16x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x16x16xf32>) -> tensor<1x2x24x16xf32>
  return %g : tensor<1x2x24x16xf32>
}

// -----

// dk with a head dim of 32 stages what the rows of a block share. Every
// query row's lse and D: blocks of 64 query rows over staged key blocks
// (keys and values transposed), as dq's first pass. Then a block of 64 key
// rows, a thread each: over the 2 query heads of its kv head and the blocks
// of 16 queries that see its keys, the queries and do (transposed) and the
// queries (as they are) staged; each key row's 16 scores and dp from the
// transposed tiles, then dk += ds q.
// CHECK-LABEL: func.func @dk_staged
// CHECK-NOT:     tensor<{{.*}}256x256
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4) {{.*}} -> (tensor<1x4x256xf32>, tensor<1x4x256xf32>)
// CHECK:           scf.for {{.*}} step %c16{{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK:             scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<32x20xf32>, tensor<32x20xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>)
// CHECK:             math.log
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 4) {{.*}} -> (tensor<1x2x256x32xf32>)
// The block's rows of k and v, which each thread reads at every step,
// copied once into rows of 36 words.
// CHECK:           %[[KS:.*]] = tensor.collapse_shape %{{.*}}#0 {{\[}}[0], [1, 2]] : tensor<64x9x4xf32> into tensor<64x36xf32>
// CHECK:           %[[KROWS:.*]] = tensor.extract_slice %[[KS]][0, 0] [64, 32] [1, 1] : tensor<64x36xf32> to tensor<64x32xf32>
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} -> (tensor<64x32xf32>)
// CHECK:             scf.for {{.*}} step %c16{{.*}} -> (tensor<64x32xf32>)
// CHECK:               bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x32xf32>
// CHECK:               scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<32x20xf32>, tensor<32x20xf32>, tensor<16x32xf32>)
// CHECK:               scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x32xf32>)
// CHECK:                 vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:                 math.exp
// CHECK:                 vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:                 vector.contract {{.*}} : vector<1x16xf32>, vector<16x32xf32> into vector<1x32xf32>
// Each row's dk goes into the key rows' tile, read by then; the block's
// threads then copy the tile into dk in chunks of 4, 8 consecutive
// threads a row (whole requests).
// CHECK:           %[[DK:.*]] = scf.forall (%{{.*}}) in (64) shared_outs(%{{.*}} = %[[KROWS]]) -> (tensor<64x32xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x8x4xf32>)
// CHECK-COUNT-4:     vector.transfer_read %[[DK]]{{.*}} : tensor<64x32xf32>, vector<4xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @dk_staged(%q: tensor<1x4x256x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>, %do: tensor<1x4x256x32xf32>) -> tensor<1x2x256x32xf32> {
  %g = fuel.fused flash_attn_backward_k {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v, %do) : (tensor<1x4x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x4x256x32xf32>) -> tensor<1x2x256x32xf32>
  return %g : tensor<1x2x256x32xf32>
}

// -----

// dv, with blocks of 32 key rows, stages the queries (transposed) and do
// (as it is): dv += p do. The block's key rows, which each thread reads
// at every query block, are copied once, before the loops over heads and
// query blocks, into rows of 36 words (16-byte reads free of bank
// conflicts).
// CHECK-LABEL: func.func @dv_staged
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 3) {{.*}} -> (tensor<1x1x96x16xf32>)
// CHECK:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x36xf32>
// CHECK:           scf.forall (%{{.*}}) in (32) shared_outs({{.*}}) -> (tensor<32x9x4xf32>)
// CHECK:           %[[KS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<32x9x4xf32> into tensor<32x36xf32>
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} step %c16{{.*}} -> (tensor<32x16xf32>)
// CHECK:               scf.forall (%{{.*}}) in (32) shared_outs({{.*}}) -> (tensor<32x20xf32>, tensor<16x16xf32>)
// CHECK:               scf.forall (%[[R:.*]]) in (32) shared_outs({{.*}}) -> (tensor<32x16xf32>)
// CHECK:                 vector.transfer_read %[[KS]][%[[R]], %{{.*}}]{{.*}} : tensor<32x36xf32>, vector<1x16xf32>
// CHECK:                 vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:                 math.exp
// CHECK:                 vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK-NOT:             vector.contract
// CHECK:           } {mapping = [#gpu.thread<x>]}
func.func @dv_staged(%q: tensor<1x1x32x32xf32>, %k: tensor<1x1x96x32xf32>, %v: tensor<1x1x96x16xf32>, %do: tensor<1x1x32x16xf32>) -> tensor<1x1x96x16xf32> {
  %g = fuel.fused flash_attn_backward_v {softmax_scale = 0.25 : f32} (%q, %k, %v, %do) : (tensor<1x1x32x32xf32>, tensor<1x1x96x32xf32>, tensor<1x1x96x16xf32>, tensor<1x1x32x16xf32>) -> tensor<1x1x96x16xf32>
  return %g : tensor<1x1x96x16xf32>
}

// -----

// Sequences off the blocks, staged: 40 queries in a block of 64 rows for
// lse and D, and padded to 48 (steps of 16) for the sums; 24 keys in a
// block of 32 rows, masked; f16 in and out.
// CHECK-LABEL: func.func @dv_padded
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 1) {{.*}} -> (tensor<1x2x64xf32>, tensor<1x2x64xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1) {{.*}} -> (tensor<1x1x32x16xf16>)
// CHECK:           scf.forall (%{{.*}}) in (32)
// CHECK:             scf.for {{.*}} to %c48 step %c16
// CHECK:               bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x16xf32>
// CHECK:         tensor.extract_slice {{.*}} to tensor<1x1x24x16xf16>
func.func @dv_padded(%q: tensor<1x2x40x16xf16>, %k: tensor<1x1x24x16xf16>, %v: tensor<1x1x24x16xf16>, %do: tensor<1x2x40x16xf16>) -> tensor<1x1x24x16xf16> {
  %g = fuel.fused flash_attn_backward_v {softmax_scale = 0.25 : f32} (%q, %k, %v, %do) : (tensor<1x2x40x16xf16>, tensor<1x1x24x16xf16>, tensor<1x1x24x16xf16>, tensor<1x2x40x16xf16>) -> tensor<1x1x24x16xf16>
  return %g : tensor<1x1x24x16xf16>
}

// -----

// With at most 32 threads, blocks of 64 query rows (dq) or 64 key rows
// (dk, dv) do not fit.
// REPORT: remark: fuel-codegen-gpu: flash_attn_backward_q not scheduled: a query block (64 rows, a thread each) is more than max-threads (32)
// REPORT: remark: fuel-codegen-gpu: flash_attn_backward_k not scheduled: a key block (64 rows, a thread each) is more than max-threads (32)
func.func @big_blocks(%q: tensor<1x1x64x16xf32>) -> (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) {
  %gq = fuel.fused flash_attn_backward_q {softmax_scale = 0.25 : f32} (%q, %q, %q, %q) : (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
  %gk = fuel.fused flash_attn_backward_k {softmax_scale = 0.25 : f32} (%q, %q, %q, %q) : (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
  return %gq, %gk : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>
}
