// The GPU quantized schedule: qmatmul and nf4_matmul with up to 16 rows of
// activations as a block per output element, thread t of the block on
// chunks t, t + T, ... of 8 consecutive k (the activations of a chunk read
// as vectors of 16 bytes), each weight decoded where it is read (the
// decomposition's dequantization evaluated at (n, k)), the partial sums
// combined by gpu.all_reduce; awq_matmul, whose weight is [K, N], with
// lanes along n instead. No [N, K] f32 weight.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu --canonicalize %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Q8_0, 2 rows: 2 x 64 blocks; the block's row and column from its index.
// K = 512 is 64 chunks of 8: 64 threads of one chunk, its 8 activations
// two reads of 4 f32, then 8 weights decoded and summed. The block's scale
// is read by the first weight; a chunk's 8 bytes of quants, which start at
// an even byte (blocks of 34 bytes, 2 of scale), lie in 3 consecutive
// words: the first weight reads the first, the others take the word
// (byte offset mod 4 + j) / 4 of those, each read once (the second and
// third clamped to the stream: the third is past the chunk's bytes where
// they start at a word).
// CHECK-LABEL: func.func @q8_0
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[B:.*]]) in (128) shared_outs
// CHECK-DAG:       %[[N:.*]] = arith.remui %[[B]], %c64
// CHECK-DAG:       %[[M:.*]] = arith.divui %[[B]], %c64
// CHECK:           bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64xf32>
// CHECK:           scf.forall (%[[T:.*]]) in (64)
// CHECK:             scf.for %[[C:.*]] = %[[T]] to %c64 step %c64 iter_args(%{{.*}} = %cst) -> (f32)
// CHECK:               %[[K:.*]] = arith.muli %[[C]], %c8
// CHECK:               %[[A0:.*]] = vector.transfer_read %arg0[%[[M]], %[[K]]]{{.*}} : tensor<2x512xf32>, vector<4xf32>
// CHECK:               %[[K4:.*]] = arith.addi %[[K]], %c4
// CHECK:               %[[A1:.*]] = vector.transfer_read %arg0[%[[M]], %[[K4]]]{{.*}} : tensor<2x512xf32>, vector<4xf32>
// CHECK:               vector.extract %[[A0]][0]
// The block's f16 scale and the quant: 34-byte blocks, 16 per row of W.
// CHECK:               arith.muli %[[N]], %c16
// CHECK:               arith.muli %{{.*}}, %c34
// CHECK:               tensor.extract %arg1[%{{.*}}] : tensor<8704xi32>
// CHECK:               arith.bitcast %{{.*}} : i16 to f16
// CHECK:               %[[W0:.*]] = tensor.extract %arg1[%{{.*}}] : tensor<8704xi32>
// CHECK:               arith.extsi %{{.*}} : i8 to i32
// CHECK:               arith.mulf
// CHECK:               arith.addf
// CHECK:               %[[AT1:.*]] = arith.minui %{{.*}}, %c8703 : index
// CHECK:               %[[W1:.*]] = tensor.extract %arg1[%[[AT1]]] : tensor<8704xi32>
// CHECK:               arith.select %{{.*}}, %[[W1]], %[[W0]] : i32
// CHECK:               %[[AT2:.*]] = arith.minui %{{.*}}, %c8703 : index
// CHECK:               %[[W2:.*]] = tensor.extract %arg1[%[[AT2]]] : tensor<8704xi32>
// CHECK:               arith.select %{{.*}}, %[[W2]], %{{.*}} : i32
// CHECK-NOT:           tensor.extract %arg1
// CHECK:               vector.extract %[[A1]][3]
// CHECK-NOT:           tensor.extract %arg
// CHECK:             gpu.all_reduce add %{{.*}} uniform
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 64] : tensor<128xf32> into tensor<2x64xf32>
// CHECK-NOT:     tensor<64x512xf32>
func.func @q8_0(%a: tensor<2x512xf32>, %w: tensor<8704xi32>) -> tensor<2x64xf32> {
  %y = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%a, %w) : (tensor<2x512xf32>, tensor<8704xi32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// nf4: the code book's value and the block's absmax read per weight; 16
// chunks of 8 k take a warp. A chunk's codes, two a byte along k, are one
// read of 4 bytes at kBase / 2, each byte shared by two k.
// CHECK-LABEL: func.func @nf4
// CHECK:         scf.forall (%{{.*}}) in (18)
// CHECK:           scf.forall (%{{.*}}) in (32)
// CHECK:             %[[HALF:.*]] = arith.shrui %[[KBASE:.*]], %c1 : index
// CHECK:             %[[CODES:.*]] = vector.transfer_read %arg1[%{{.*}}, %[[HALF]]], %{{.*}} {in_bounds = [true]} : tensor<6x64xi8>, vector<4xi8>
// CHECK:             vector.extract %[[CODES]][0] : i8 from vector<4xi8>
// CHECK:             tensor.extract %arg2[%{{.*}}, %{{.*}}] : tensor<6x2xf32>
// CHECK:             vector.extract %[[CODES]][0] : i8 from vector<4xi8>
// CHECK:             vector.extract %[[CODES]][1] : i8 from vector<4xi8>
// CHECK-NOT:         tensor.extract %arg1
// CHECK:             gpu.all_reduce add
func.func @nf4(%a: tensor<3x128xf32>, %w: tensor<6x64xi8>, %absmax: tensor<6x2xf32>) -> tensor<3x6xf32> {
  %y = fuel.fused nf4_matmul (%a, %w, %absmax) : (tensor<3x128xf32>, tensor<6x64xi8>, tensor<6x2xf32>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// awq: its [K, N] weight (8 codes a word along n) decoded by lanes along n.
// A block per row, run of 64 columns (8 words) and partition of K: 2 rows x
// 2 runs give 4 blocks, short of 2 per multiprocessor, so K's 128 chunks of
// 8 k are split into 4 partitions of 32, one chunk per thread: 16 blocks.
// Thread t of 256 takes word t % 8 (its 8 columns) and chunks t / 8, + 32,
// ... of its partition; each k of a chunk one read of the word, the
// chunk's 8 activations two reads of 4 f32, the group's 8 scales one pair.
// The 8 partial sums go to workgroup memory (value j at j * 12 + lane, rows
// of 104), a thread per column adds 32 of them, and a second kernel adds
// the 4 partitions' sums. No gpu.all_reduce, no [K, N] f32 weight.
// CHECK-LABEL: func.func @awq
// CHECK-NOT:     gpu.all_reduce
// CHECK:         %[[PARTS:.*]] = scf.forall (%{{.*}}) in (16) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8x128xf32>)
// CHECK:           alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x104xf32>
// CHECK:           scf.forall (%[[T:.*]]) in (256)
// CHECK-DAG:         %[[LANE:.*]] = arith.remui %[[T]], %c8
// CHECK-DAG:         %[[SPLIT:.*]] = arith.divui %[[T]], %c8
// CHECK:             %{{.*}}:8 = scf.for {{.*}} step %c32 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:               vector.transfer_read %arg0{{.*}} : tensor<2x1024xf32>, vector<4xf32>
// CHECK:               vector.transfer_read %arg0{{.*}} : tensor<2x1024xf32>, vector<4xf32>
// CHECK:               vector.transfer_read %arg1{{.*}} : tensor<1024x16xi32>, vector<1xi32>
// CHECK:               vector.transfer_read %arg2{{.*}} : tensor<8x16xi32>, vector<1xi32>
// CHECK:               vector.transfer_read %arg3{{.*}} : tensor<8x128xf32>, vector<4xf32>
// CHECK-NOT:           tensor.extract %arg
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[SPLIT]], %[[LANE]]] [1, 8] [1, 12] : tensor<1x8xf32> into tensor<32x104xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           scf.forall (%{{.*}}) in (64) shared_outs(%{{.*}}) -> (tensor<1x64xf32>)
// CHECK:             scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK:               tensor.extract %{{.*}} : tensor<32x104xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}}) -> (tensor<2x128xf32>)
// CHECK:           scf.forall (%{{.*}}) in (64)
// CHECK:             scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK:               tensor.extract %[[PARTS]]{{.*}} : tensor<8x128xf32>
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK-NOT:     tensor<1024x128xf32>
func.func @awq(%a: tensor<2x1024xf32>, %q: tensor<1024x16xi32>, %z: tensor<8x16xi32>, %s: tensor<8x128xf32>) -> tensor<2x128xf32> {
  %y = fuel.fused awq_matmul {group_size = 128 : i64} (%a, %q, %z, %s) : (tensor<2x1024xf32>, tensor<1024x16xi32>, tensor<8x16xi32>, tensor<8x128xf32>) -> tensor<2x128xf32>
  return %y : tensor<2x128xf32>
}

// -----

// More than 16 rows (prefill), M and N multiples of 32: block tiles whose
// threads stage the activations and the decoded weight (the quantized words
// read where each weight is decoded, along K) in workgroup memory at each
// step along K, then accumulate 4 x 4 tiles from them; no [N, K] f32
// weight. Two blocks of 32 x 32, not one of 32 x 64: the grid short of
// the multiprocessors takes the smaller tiles. The weight's tile, written
// along K (a warp down a column), has rows of 36 words, not 32: 4-way
// bank conflicts, not 32-way; its readers take the [16, 32] slice.
// CHECK-LABEL: func.func @prefill
// CHECK-NOT:     fuel.fused
// CHECK-NOT:     tensor<64x512xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2)
// CHECK:           scf.for {{.*}} to %c512{{.*}} step %c16{{.*}} -> (tensor<8x8x4x4xf32>)
// CHECK:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
// CHECK:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x36xf32>
// CHECK:             scf.forall
// CHECK:               tensor.extract %arg1{{.*}} : tensor<8704xi32>
// CHECK:               arith.sitofp
// CHECK:             } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:             vector.transfer_read %{{.*}} : tensor<16x36xf32>, vector<16x4xf32>
// CHECK:             vector.contract {{.*}} : vector<4x16xf32>, vector<16x4xf32> into vector<4x4xf32>
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @prefill(%a: tensor<32x512xf32>, %w: tensor<8704xi32>) -> tensor<32x64xf32> {
  %y = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%a, %w) : (tensor<32x512xf32>, tensor<8704xi32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// Other prefill shapes: the contraction schedule's tiles, block tiles of
// the output and 4 x 4 thread tiles, each thread decoding the 4 x 8
// weights of a reduction step where it reads them (the quantized words
// gathered).
// CHECK-LABEL: func.func @prefill_cached
// CHECK-NOT:     workgroup
// CHECK:         scf.forall {{.*}} to (20, 64) step (4, 64)
// CHECK:           scf.forall {{.*}} to (4, 64) step (4, 4)
// CHECK:             scf.for {{.*}} step %c8{{.*}} -> (tensor<4x4xf32>)
// CHECK:               vector.gather {{.*}} : tensor<8704xi32>
// CHECK:               vector.contract {{.*}} : vector<4x8xf32>, vector<4x8xf32> into vector<4x4xf32>
// CHECK:           } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func @prefill_cached(%a: tensor<20x512xf32>, %w: tensor<8704xi32>) -> tensor<20x64xf32> {
  %y = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%a, %w) : (tensor<20x512xf32>, tensor<8704xi32>) -> tensor<20x64xf32>
  return %y : tensor<20x64xf32>
}

// -----

// More than 16 rows whose count is not a multiple of 4, and f64
// activations, lower as decomposed.
// CHECK-LABEL: func.func @unscheduled
// CHECK-COUNT-2: fuel.fused qmatmul
// REPORT: not scheduled: the GPU quantized schedule takes up to 16 rows of activations, or a 2-d matrix of them with rows and columns multiples of 4 (got 30 x 64)
// REPORT: not scheduled: the GPU quantized schedule handles f32, f16 and bf16 activations and results
func.func @unscheduled(%a: tensor<30x512xf32>, %d: tensor<2x512xf64>, %w: tensor<8704xi32>) -> (tensor<30x64xf32>, tensor<2x64xf64>) {
  %y = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%a, %w) : (tensor<30x512xf32>, tensor<8704xi32>) -> tensor<30x64xf32>
  %z = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%d, %w) : (tensor<2x512xf64>, tensor<8704xi32>) -> tensor<2x64xf64>
  return %y, %z : tensor<30x64xf32>, tensor<2x64xf64>
}

// -----

// f16 activations (an f16 result): the decomposition's f32 contraction is
// scheduled, a chunk's 8 activations one 16-byte read, and each block
// converts its output to f16 where it writes it. No [N, K] f32 weight, no
// kernel of its own for the conversion.
// CHECK-LABEL: func.func @half
// CHECK-NOT:     fuel.fused
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%{{.*}}) in (128) shared_outs(%{{.*}}) -> (tensor<128xf16>)
// CHECK:               vector.transfer_read %arg0{{.*}} : tensor<2x512xf16>, vector<8xf16>
// CHECK:             gpu.all_reduce add
// CHECK:           %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:           tensor.from_elements %[[H]] : tensor<1xf16>
// CHECK:         } {mapping = [#gpu.block<x>]}
// CHECK:         tensor.expand_shape {{.*}} into tensor<2x64xf16>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     tensor<64x512xf32>
func.func @half(%h: tensor<2x512xf16>, %w: tensor<8704xi32>) -> tensor<2x64xf16> {
  %z = fuel.fused qmatmul {k = 512 : i64, n = 64 : i64, quant_type = #fuel.quant<q8_0>} (%h, %w) : (tensor<2x512xf16>, tensor<8704xi32>) -> tensor<2x64xf16>
  return %z : tensor<2x64xf16>
}
