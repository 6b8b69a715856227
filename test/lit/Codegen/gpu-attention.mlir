// The GPU attention schedule (flash_attn): FlashAttention-2's loops with a
// block per (batch, head, query block) and a thread per query row, the
// key loop over blocks of 16 keys with the online softmax in registers,
// the key and value blocks staged in workgroup memory where the shape
// allows. No [Sq, Sk] scores.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=32 report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-staged-head-dim=0" %s \
// RUN:   | FileCheck %s --check-prefix=NOSTAGE
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-staged-head-dim=128" %s \
// RUN:   | FileCheck %s --check-prefix=WIDE
// RUN: not fuel-opt --fuel-codegen-gpu="max-staged-head-dim=20" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: fuel-codegen-gpu: max-staged-head-dim must be a multiple of 16 (0 for none), got 20
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="own-rows-bytes=0" %s \
// RUN:   | FileCheck %s --check-prefix=NOOWN
// RUN: not fuel-opt --fuel-codegen-gpu="own-rows-bytes=49153" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOWN
// BADOWN: fuel-codegen-gpu: own-rows-bytes must be between 0 and 49152 (a block's static workgroup memory), got 49153

// With max-staged-head-dim=0 nothing is staged.
// NOSTAGE-LABEL: func.func @causal
// NOSTAGE-NOT:     workgroup
// NOSTAGE:       } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}

// With own-rows-bytes=0 the keys and values are staged, and each thread
// reads its query row from global memory at every key block.
// NOOWN-LABEL: func.func @causal
// NOOWN-NOT:     tensor<64x68xf32>
// NOOWN:         scf.for
// NOOWN:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64x20xf32>
// NOOWN:           scf.forall (%[[R:.*]]) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// NOOWN:             vector.transfer_read %arg0[{{.*}}]{{.*}} : tensor<2x4x256x64xf32>, vector<1x16xf32>
// Without that tile, each thread writes its row of the output.
// NOOWN:           %[[OUT:.*]] = tensor.extract_slice %{{.*}} [1, 1, 64, 64] [1, 1, 1, 1] : tensor<2x4x256x64xf32> to tensor<64x64xf32>
// NOOWN:           scf.forall (%{{.*}}) in (64) shared_outs(%{{.*}} = %[[OUT]]) -> (tensor<64x64xf32>)
// NOOWN-NOT:       scf.forall (
// NOOWN:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}

// Query blocks of 64 rows stage each block of 16 keys and values in
// workgroup memory: the key loop is in the block's body, around a thread
// loop that copies the keys (transposed, [D, 16]) and the values, and one
// in which each thread updates its row's running max, sum and accumulator
// row (carried by the key loop as [64], [64], [64, 64]).
// CHECK-LABEL: func.func @causal
// CHECK-NOT:     fuel.fused
// CHECK-NOT:     tensor<{{.*}}256x256
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 4)
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK:           } {mapping = [#gpu.thread<x>]}
// The block's 64 query rows, which their threads read at every key block,
// are copied once, before the key loop, into a [64, 68] tile: rows 4
// words wider than the row, so that the 16-byte reads of 8 threads' rows
// (a wavefront) cover the 32 banks. 16 consecutive threads copy a row in
// chunks of 4 (coalesced), 4 rows a pass.
// CHECK:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64x68xf32>
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x17x4xf32>)
// CHECK-COUNT-16:    vector.transfer_read %arg0{{.*}} : tensor<2x4x256x64xf32>, vector<4xf32>
// CHECK-NOT:         vector.transfer_read %arg0
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           %[[QS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<64x17x4xf32> into tensor<64x68xf32>
// CHECK:           %[[QROWS:.*]] = tensor.extract_slice %[[QS]][0, 0] [64, 64] [1, 1] : tensor<64x68xf32> to tensor<64x64xf32>
// CHECK:           scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %c16{{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64x20xf32>
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x64xf32>
// The keys transposed, consecutive threads on consecutive elements of a
// key, each thread writing the elements of 4 keys at once ([64, 20] as
// [64, 5, 4]); the values as they are, [16, 64] as [16, 16, 4], a thread's
// 4 chunks of 4 consecutive elements each one vector read.
// CHECK:             scf.forall (%[[T:.*]]) in (64) shared_outs({{.*}}) -> (tensor<64x5x4xf32>, tensor<16x16x4xf32>)
// CHECK:               tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %[[J0]], %[[T]]] : tensor<2x4x256x64xf32>
// CHECK-COUNT-3:       tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[T]]] : tensor<2x4x256x64xf32>
// CHECK-NEXT:          vector.from_elements %{{.*}} : vector<4xf32>
// CHECK-NEXT:          vector.transfer_write %{{.*}} : vector<4xf32>, tensor<1x4x4xf32>
// CHECK-COUNT-4:       vector.transfer_read %arg2{{.*}} : tensor<2x4x256x64xf32>, vector<4xf32>
// CHECK:             } {mapping = [#gpu.thread<x>]}
// CHECK:             tensor.collapse_shape %{{.*}}#0 {{\[}}[0], [1, 2]] : tensor<64x5x4xf32> into tensor<64x20xf32>
// CHECK:             tensor.collapse_shape %{{.*}}#1 {{\[}}[0], [1, 2]] : tensor<16x16x4xf32> into tensor<16x64xf32>
// The keys' rows are 20 words apart: the 16-byte writes of 8 consecutive
// threads (one wavefront) cover the 32 banks once, where single words down
// a column would be 4-way bank-conflicted (16-way with rows 16 words
// apart); a row reads its 16 keys.
// CHECK:             scf.forall (%[[R:.*]]) in (64) shared_outs({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK:               vector.transfer_read %[[QS]][%[[R]], %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<64x68xf32>, vector<1x16xf32>
// CHECK:               vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<64x20xf32>, vector<16x16xf32>
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:               math.exp
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x64xf32> into vector<1x64xf32>
// CHECK:             } {mapping = [#gpu.thread<x>]}
// The rows of o (acc / l) go into the query rows' tile, read by then (each
// thread writes over its own row); then the block's threads copy the tile
// into the output, 16 consecutive threads a row in chunks of 4 (whole
// requests), 4 rows a pass, where a thread writing its own row of the
// output would move a float a lane, lanes a row apart.
// CHECK:           %[[OUT:.*]] = tensor.extract_slice %{{.*}} [1, 1, 64, 64] [1, 1, 1, 1] : tensor<2x4x256x64xf32> to tensor<64x64xf32>
// CHECK:           %[[O:.*]] = scf.forall (%{{.*}}) in (64) shared_outs(%{{.*}} = %[[QROWS]]) -> (tensor<64x64xf32>)
// CHECK:             arith.divf
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           %[[OUT4:.*]] = tensor.expand_shape %[[OUT]] {{\[}}[0], [1, 2]] output_shape [64, 16, 4] : tensor<64x64xf32> into tensor<64x16x4xf32>
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs(%{{.*}} = %[[OUT4]]) -> (tensor<64x16x4xf32>)
// CHECK-COUNT-16:    vector.transfer_read %[[O]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<64x64xf32>, vector<4xf32>
// CHECK:             tensor.parallel_insert_slice %{{.*}} [16, 1, 4] [4, 1, 1] : tensor<16x1x4xf32> into tensor<64x16x4xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @causal(%q: tensor<2x4x256x64xf32>, %k: tensor<2x4x256x64xf32>, %v: tensor<2x4x256x64xf32>) -> tensor<2x4x256x64xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32>) -> tensor<2x4x256x64xf32>
  return %o : tensor<2x4x256x64xf32>
}

// -----

// A head dim of 40 (not a multiple of 16; padded to 48): no staging, each
// thread runs its own key loop, reading the keys through the caches.
// CHECK-LABEL: func.func @unstaged
// CHECK-NOT:     workgroup
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 4)
// CHECK:           scf.forall (%[[ROW:.*]]) in (64)
// Each thread: its running max, sum and accumulator row through the key
// loop; a 16-key score row; with D = 48, steps of 16 over the head dim
// and the whole key block at once for p . v.
// CHECK:             scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1xf32>, tensor<1xf32>, tensor<1x48xf32>)
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x16xf32> into vector<1x16xf32>
// CHECK:               math.exp
// CHECK:               vector.contract {{.*}} : vector<1x16xf32>, vector<16x48xf32> into vector<1x48xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @unstaged(%q: tensor<2x4x256x40xf32>, %k: tensor<2x4x256x40xf32>, %v: tensor<2x4x256x40xf32>) -> tensor<2x4x256x40xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<2x4x256x40xf32>, tensor<2x4x256x40xf32>, tensor<2x4x256x40xf32>) -> tensor<2x4x256x40xf32>
  return %o : tensor<2x4x256x40xf32>
}

// -----

// A head dim of 48, which 64 threads do not divide nor it them: the
// threads copy in groups of gcd(48, 64) = 16 consecutive threads, the 4
// groups over the other dim. The keys [48, 16] (as [48, 5, 4]): thread t
// writes the 4 keys of group t / 16 at rows t % 16, + 16, + 32; the
// values [16, 48] (12 chunks of 4 a row, groups of gcd(12, 64) = 4): rows
// t / 4, chunks t % 4, + 4, + 8.
// CHECK-LABEL: func.func @groups
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x48xf32>)
// CHECK:             scf.forall (%[[T:.*]]) in (64) shared_outs({{.*}}) -> (tensor<48x5x4xf32>, tensor<16x12x4xf32>)
// CHECK:               %[[KG:.*]] = arith.divui %[[T]], %{{.*}} : index
// CHECK:               %[[KL:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK:               arith.divui %[[T]], %{{.*}} : index
// CHECK:               arith.remui %[[T]], %{{.*}} : index
// CHECK:               tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[KL]], %[[KG]], 0] [3, 1, 4] [16, 4, 1] : tensor<3x1x4xf32> into tensor<48x5x4xf32>
// CHECK:               tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, 0] [1, 3, 4] [16, 4, 1] : tensor<1x3x4xf32> into tensor<16x12x4xf32>
func.func @groups(%q: tensor<2x4x256x48xf32>, %k: tensor<2x4x256x48xf32>, %v: tensor<2x4x256x48xf32>) -> tensor<2x4x256x48xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<2x4x256x48xf32>, tensor<2x4x256x48xf32>, tensor<2x4x256x48xf32>) -> tensor<2x4x256x48xf32>
  return %o : tensor<2x4x256x48xf32>
}

// -----

// GQA and sequences off the blocks: 8 query heads on 2 key heads, 40
// queries (the CPU's blocks are 8 rows; staged, one block of 64, padded),
// 24 keys padded to 32 (two staged blocks of 16) and masked.
// CHECK-LABEL: func.func @gqa
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 1) {{.*}} -> (tensor<1x8x64x32xf16>)
// CHECK:           scf.forall (%{{.*}}) in (64)
// CHECK:           scf.for {{.*}} = %c0 to %c32 step %c16
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x20xf32>
// The rows of o go through the query rows' tile, of f32, and are narrowed
// as the block copies them out, 16 bytes of the tile (4 halves) a thread
// at a time: 32 bytes would put threads 0 and 4 of a quarter of a warp on
// the same banks.
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x32xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs({{.*}}) -> (tensor<64x8x4xf16>)
// CHECK-COUNT-8:     arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// CHECK-NOT:         arith.truncf
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         tensor.extract_slice {{.*}} to tensor<1x8x40x32xf16>
// CHECK-NOT:     tensor<{{.*}}40x24
func.func @gqa(%q: tensor<1x8x40x32xf16>, %k: tensor<1x2x24x32xf16>, %v: tensor<1x2x24x32xf16>) -> tensor<1x8x40x32xf16> {
  %o = fuel.fused flash_attn {softmax_scale = 0.2 : f32} (%q, %k, %v) : (tensor<1x8x40x32xf16>, tensor<1x2x24x32xf16>, tensor<1x2x24x32xf16>) -> tensor<1x8x40x32xf16>
  return %o : tensor<1x8x40x32xf16>
}

// -----

// With at most 32 threads a block of 64 query rows does not fit.
// REPORT: remark: fuel-codegen-gpu: flash_attn not scheduled: a query block (64 rows, a thread each) is more than max-threads (32)
func.func @big_block(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.25 : f32} (%q, %k, %v) : (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// Heads of 128 are staged only up to max-staged-head-dim=128 (fuel-to-nvvm
// sets it from sm_90 on): keys [128, 16], values [16, 128].
// CHECK-LABEL: func.func @wide_heads
// CHECK-NOT:     workgroup
// WIDE-LABEL: func.func @wide_heads
// WIDE:         bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<128x20xf32>
// WIDE:         bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x128xf32>
func.func @wide_heads(%q: tensor<1x2x64x128xf32>, %k: tensor<1x2x64x128xf32>, %v: tensor<1x2x64x128xf32>) -> tensor<1x2x64x128xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>) -> tensor<1x2x64x128xf32>
  return %o : tensor<1x2x64x128xf32>
}

// -----

// One query (decoding) against 1,001 keys, GQA, 16 (batch, head) rows:
// too few query rows to stage, so a block per (batch, head, query) spreads
// the row's 251 steps of 4 keys over 8 groups of 16 lanes (heads of 64: 4
// columns a lane), two groups a warp: the loop runs over the steps of the
// warp's first group and the second takes the 4 keys after each (the last
// read from key 997 on, keys outside the group's step masked), so that a
// warp's lanes take as many steps. A lane's dot products are summed over
// its group by a clustered subgroup reduction; the groups' partials (max,
// sum, a row of 64 a group, 4 columns a lane) a thread per column
// combines. The keys and values are read in place: nothing is copied,
// padded or transposed first.
// CHECK-LABEL: func.func @decode
// CHECK-NOT:     x1004x
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 8, 1) {{.*}} -> (tensor<2x8x1x64xf16>)
// CHECK:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<8x64xf32>
// CHECK:           scf.forall (%[[T:.*]]) in (128) shared_outs({{.*}}) -> (tensor<128xf32>, tensor<128xf32>, tensor<8x64xf32>)
// CHECK:             %[[GROUP:.*]] = arith.divui %[[T]], %c16
// CHECK:             %[[LANE:.*]] = arith.remui %[[T]], %c16
// CHECK:             %[[IN_WARP:.*]] = arith.remui %[[GROUP]], %c2
// CHECK:             %[[SHIFT:.*]] = arith.muli %[[IN_WARP]], %c4
// CHECK:             scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c32
// CHECK:               %[[J:.*]] = arith.addi %[[FIRST]], %[[SHIFT]]
// CHECK:               arith.minsi %[[J]], %c997
// CHECK:               vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<2x2x1001x64xf16>, vector<4x4xf16>
// CHECK-COUNT-4:       gpu.subgroup_reduce add %{{.*}} uniform cluster(size = 16) : (f32) -> f32
// CHECK:               arith.ori
// CHECK:               math.exp
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[GROUP]], %{{.*}}] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x64xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           tensor.extract_slice %{{.*}}[0] [8] [16] : tensor<128xf32> to tensor<8xf32>
// CHECK:           scf.forall (%[[G:.*]]) in (64) shared_outs({{.*}}) -> (tensor<1x64xf16>)
// CHECK:             tensor.extract_slice %{{.*}}[0, %[[G]]] [8, 1] [1, 64] : tensor<8x64xf32> to tensor<8x1xf32>
// CHECK:             math.exp
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x1001x64xf16>, %v: tensor<2x2x1001x64xf16>) -> tensor<2x8x1x64xf16> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<2x8x1x64xf16>, tensor<2x2x1001x64xf16>, tensor<2x2x1001x64xf16>) -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// -----

// Four rows of 2,048 keys: each row's keys in 4 partitions (blocks), 128
// threads each (16 groups of 8 lanes); the blocks write their max and sum
// ([.., 2]) and unnormalized rows, and a second block loop combines a
// row's 4.
// CHECK-LABEL: func.func @decode_partitions
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4) {{.*}} -> (tensor<1x4x4x2xf32>, tensor<1x4x4x32xf32>)
// CHECK:           scf.forall (%{{.*}}) in (128) shared_outs({{.*}}) -> (tensor<128xf32>, tensor<128xf32>, tensor<16x32xf32>)
// CHECK:             gpu.subgroup_reduce add %{{.*}} uniform cluster(size = 8) : (f32) -> f32
// CHECK:           scf.forall (%{{.*}}) in (32) shared_outs({{.*}}) -> (tensor<1x32xf32>)
// CHECK:           scf.forall (%{{.*}}) in (1) shared_outs({{.*}}) -> (tensor<2xf32>)
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 1) {{.*}} -> (tensor<1x4x1x32xf32>)
// CHECK:           tensor.extract_slice %{{.*}} : tensor<1x4x4x32xf32> to tensor<4x32xf32>
// CHECK:           scf.forall (%{{.*}}) in (32) shared_outs({{.*}}) -> (tensor<1x32xf32>)
// CHECK:             vector.transfer_read %{{.*}} : tensor<1x4x4x2xf32>, vector<4xf32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<1x4x4x2xf32>, vector<4xf32>
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @decode_partitions(%q: tensor<1x4x1x32xf32>, %k: tensor<1x4x2048x32xf32>, %v: tensor<1x4x2048x32xf32>) -> tensor<1x4x1x32xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32} (%q, %k, %v) : (tensor<1x4x1x32xf32>, tensor<1x4x2048x32xf32>, tensor<1x4x2048x32xf32>) -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

// 48 keys are too few to split: a thread per query row.
// CHECK-LABEL: func.func @few_keys
// CHECK-NOT:     workgroup
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @few_keys(%q: tensor<1x2x4x32xf32>, %k: tensor<1x2x48x32xf32>, %v: tensor<1x2x48x32xf32>) -> tensor<1x2x4x32xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32} (%q, %k, %v) : (tensor<1x2x4x32xf32>, tensor<1x2x48x32xf32>, tensor<1x2x48x32xf32>) -> tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}
