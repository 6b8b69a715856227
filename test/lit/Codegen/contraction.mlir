// The contraction schedule: fused_linear as cache tiles of the output in an
// scf.forall, 8x32 register tiles inside (1x64 and 2x64 for up to 4 rows),
// the reduction in steps of 16 with the accumulator carried as a vector,
// the bias added once per tile; a reduction longer than 256 in blocks of 16
// or 8 rows of b, each block over all the register tiles of cache tiles up
// to 4096 columns wide.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// AVX2's 16 registers of 256 bits: 4x16 register tiles, 128-row cache tiles.
// RUN: fuel-opt --split-input-file \
// RUN:   --fuel-codegen-cpu="vector-registers=16 vector-register-bits=256" %s \
// RUN:   | FileCheck %s --check-prefix=AVX2
// RUN: not fuel-opt --fuel-codegen-cpu="vector-registers=2" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-REGISTERS
// RUN: not fuel-opt --fuel-codegen-cpu="vector-register-bits=100" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-BITS
// RUN: not fuel-opt --fuel-codegen-cpu="threads=0" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-THREADS
// Four threads: at least eight cache tiles where the columns allow.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="threads=4" %s \
// RUN:   | FileCheck %s --check-prefix=THREADS
// BAD-REGISTERS: fuel-codegen-cpu: vector-registers must be at least 4, got 2
// BAD-BITS: fuel-codegen-cpu: vector-register-bits must be a multiple of 32 of at least 64, got 100
// BAD-THREADS: fuel-codegen-cpu: threads must be at least 1, got 0

// The cache tile's columns of b are first copied into panels of 32
// ([8, 96, 32]: each register column's rows contiguous), which the
// register tiles read.
// CHECK-LABEL: func.func @linear
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}, %[[N0:.*]]) = (0, 0) to (128, 512) step (64, 256)
// CHECK:           %[[EMPTY:.*]] = tensor.empty() : tensor<8x96x32xf32>
// CHECK:           %[[PANELS:.*]] = scf.for %{{.*}} = %{{.*}} to %c96{{.*}} step %c32{{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK:             scf.for %[[P:.*]] = %{{.*}} to %c8
// CHECK:               vector.transfer_read %arg1[%{{.*}}, %{{.*}}]{{.*}} : tensor<96x512xf32>, vector<32x32xf32>
// CHECK:               vector.transfer_write %{{.*}}, %{{.*}}[%[[P]], %{{.*}}, %{{.*}}] {{.*}} : vector<32x32xf32>, tensor<8x96x32xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK:             scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK:               scf.for %{{.*}} = %{{.*}} to %c96{{.*}} step %c16
// CHECK:                 vector.transfer_read {{.*}} vector<8x16xf32>
// CHECK:                 vector.transfer_read %[[PANELS]]{{.*}} : tensor<8x96x32xf32>, vector<16x32xf32>
// CHECK:                 vector.contract {{.*}} vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// CHECK:               vector.broadcast %{{.*}} : vector<32xf32> to vector<8x32xf32>
// CHECK:               arith.addf %{{.*}} : vector<8x32xf32>
// CHECK:         scf.forall.in_parallel
// AVX2-LABEL: func.func @linear
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 512) step (128, 256)
// AVX2:           tensor.empty() : tensor<16x96x16xf32>
// AVX2:           scf.for %{{.*}} step %c4
// AVX2:             scf.for %{{.*}} step %c16
// AVX2:               vector.contract {{.*}} vector<4x16xf32>, vector<16x16xf32> into vector<4x16xf32>
func.func @linear(%a: tensor<128x96xf32>, %b: tensor<96x512xf32>, %c: tensor<512xf32>) -> tensor<128x512xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<128x96xf32>, tensor<96x512xf32>, tensor<512xf32>) -> tensor<128x512xf32>
  return %y : tensor<128x512xf32>
}

// -----

// A reduction longer than 256 runs in blocks of 16 rows of b (packed, as
// there are 32 rows of a or more): the output tile is filled once, each
// block packs its rows of b and runs all the register tiles of the cache
// tile, one step each, accumulating into the tile, and the bias is added
// once, after the last block.
// CHECK-LABEL: func.func @long_reduction
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (64, 256) step (64, 256)
// CHECK:           vector.transfer_write %{{.*}} : vector<64x256xf32>, tensor<64x256xf32>
// CHECK:           scf.for %[[BLOCK:[a-z0-9_]+]] = %{{.*}} to %c640{{.*}} step %c16
// CHECK:             tensor.empty() : tensor<8x16x32xf32>
// CHECK:             vector.transfer_read %arg1[{{.*}}]{{.*}} : tensor<640x256xf32>, vector<1x32xf32>
// CHECK:             scf.for %{{.*}} step %c8
// CHECK:               scf.for %{{.*}} step %c32
// CHECK-NOT:             scf.for
// CHECK:                 vector.contract {{.*}} vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// CHECK-NOT:               arith.addf
// CHECK:           scf.for %{{.*}} step %c8
// CHECK:             scf.for %{{.*}} step %c32
// CHECK:               vector.broadcast %{{.*}} : vector<32xf32> to vector<8x32xf32>
// CHECK:               arith.addf %{{.*}} : vector<8x32xf32>
// CHECK:         scf.forall.in_parallel
func.func @long_reduction(%a: tensor<64x640xf32>, %b: tensor<640x256xf32>, %c: tensor<256xf32>) -> tensor<64x256xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<64x640xf32>, tensor<640x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

// Batch dims are rows too: a viewed as [16, K], the result viewed back;
// small sizes take the largest tiles that fit.
// CHECK-LABEL: func.func @batched
// CHECK:         tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (16, 32) step (16, 32)
// CHECK:           vector.contract
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
func.func @batched(%a: tensor<2x8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// f16 (and bf16) operands are widened to f32 in registers, each step of
// the reduction; the accumulator is f32, the result narrowed once.
// CHECK-LABEL: func.func @half
// CHECK:         scf.forall
// CHECK:               scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK:                 arith.extf %{{.*}} : vector<8x16xf16> to vector<8x16xf32>
// CHECK:                 arith.extf %{{.*}} : vector<16x32xf16> to vector<16x32xf32>
// CHECK:                 vector.contract {{.*}} vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// CHECK:               arith.truncf %{{.*}} : vector<8x32xf32> to vector<8x32xf16>
func.func @half(%a: tensor<8x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64xf16>) -> tensor<8x64xf16> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<8x32xf16>, tensor<32x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}

// -----

// M, N and K that are not multiples of the register tile's are padded with
// zeros, the padded op scheduled and its result sliced. Fewer than 32 rows
// of a read b in place, in blocks of 8 of its rows.
// CHECK-LABEL: func.func @padded
// CHECK-DAG:     %[[A:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [5, 300] [1, 1] : tensor<5x300xf32> into tensor<8x304xf32>
// CHECK-DAG:     %[[B:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [300, 20] [1, 1] : tensor<300x20xf32> into tensor<304x32xf32>
// CHECK-DAG:     %[[C:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0] [20] [1] : tensor<20xf32> into tensor<32xf32>
// CHECK:         %[[Y:.*]] = scf.forall {{.*}} -> (tensor<8x32xf32>)
// CHECK:           scf.for %{{.*}} to %c304{{.*}} step %c8
// CHECK-NOT:         tensor.empty
// CHECK:             vector.contract {{.*}} vector<8x8xf32>, vector<8x32xf32> into vector<8x32xf32>
// CHECK:         tensor.extract_slice %[[Y]][0, 0] [5, 20] [1, 1] : tensor<8x32xf32> to tensor<5x20xf32>
// CHECK-NOT:     fuel.fused
func.func @padded(%a: tensor<5x300xf32>, %b: tensor<300x20xf32>, %c: tensor<20xf32>) -> tensor<5x20xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<5x300xf32>, tensor<300x20xf32>, tensor<20xf32>) -> tensor<5x20xf32>
  return %y : tensor<5x20xf32>
}

// -----

// CHECK-LABEL: func.func @unscheduled
// CHECK-COUNT-2: fuel.fused fused_linear
// REPORT: not scheduled: the contraction schedule needs operands that are not empty
// REPORT: not scheduled: the contraction schedule handles f32, f16 and bf16
func.func @unscheduled(%a: tensor<8x0xf32>, %b: tensor<0x32xf32>, %c: tensor<32xf32>,
                       %ad: tensor<8x16xf64>, %bd: tensor<16x32xf64>, %cd: tensor<32xf64>)
    -> (tensor<8x32xf32>, tensor<8x32xf64>) {
  %0 = fuel.fused fused_linear (%a, %b, %c) : (tensor<8x0xf32>, tensor<0x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %1 = fuel.fused fused_linear (%ad, %bd, %cd) : (tensor<8x16xf64>, tensor<16x32xf64>, tensor<32xf64>) -> tensor<8x32xf64>
  return %0, %1 : tensor<8x32xf32>, tensor<8x32xf64>
}

// -----

// Dynamic rows: one row (decoding a token) runs apart, as a static
// [1, 1, K] viewed as [1, K], on one-row register tiles; 2 to 4 rows as a
// static [4, K] (zero rows after them), on two-row tiles; otherwise
// a[?, ?, K] is viewed as [?, K], padded with zero rows to a multiple of 8
// at run time and viewed as [?/8, 8, K]: the schedule's register tiles are
// 8 static rows, a cache tile takes up to 8 of them (64 rows); up to 16
// rows read b's blocks in place, 8 rows of it at a time, more pack b's
// blocks of 16 once for all; the result is viewed back, sliced and
// reshaped to [?, ?, N].
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         %[[D0:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[D1:.*]] = tensor.dim %arg0, %c1
// CHECK:         %[[ROWS:.*]] = arith.muli %[[D0]], %[[D1]]
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %[[ROWS]], %c1
// CHECK:         scf.if %[[ONE]] -> (tensor<?x?x40xf32>) {
// CHECK:           tensor.extract_slice %arg0[0, 0, 0] [1, 1, 300] [1, 1, 1] : tensor<?x?x300xf32> to tensor<1x1x300xf32>
// CHECK:           tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x1x300xf32> into tensor<1x300xf32>
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 64) step (1, 64)
// CHECK:             vector.contract {{.*}} vector<1x8xf32>, vector<8x64xf32> into vector<1x64xf32>
// CHECK:           tensor.cast %{{.*}} : tensor<1x1x40xf32> to tensor<?x?x40xf32>
// CHECK:         } else {
// CHECK:           %[[FEW:.*]] = arith.cmpi ule, %[[ROWS]], %c4
// CHECK:           scf.if %[[FEW]] -> (tensor<?x?x40xf32>) {
// CHECK:             tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x?x300xf32> into tensor<?x300xf32>
// CHECK:             tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 300] [1, 1] : tensor<?x300xf32> into tensor<4x300xf32>
// CHECK:             scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 64) step (4, 64)
// CHECK:               vector.contract {{.*}} vector<2x8xf32>, vector<8x64xf32> into vector<2x64xf32>
// CHECK:             %[[FEWY:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%[[ROWS]], 40] [1, 1] : tensor<4x40xf32> to tensor<?x40xf32>
// CHECK:             tensor.reshape %[[FEWY]]
// CHECK:           } else {
// CHECK:             %[[SOME:.*]] = arith.cmpi ule, %[[ROWS]], %c16
// CHECK:             scf.if %[[SOME]] -> (tensor<?x?x40xf32>) {
// CHECK:               %[[T1:.*]] = arith.ceildivui %{{.*}}, %c8
// CHECK:               tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%[[T1]], 8, 304] : tensor<?x304xf32> into tensor<?x8x304xf32>
// CHECK:               scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (%[[T1]], 8, 64) step (8, 8, 64)
// CHECK:                 scf.for %{{.*}} = %{{.*}} to %c304{{.*}} step %c8
// CHECK-NOT:               tensor.empty
// CHECK:                   vector.transfer_read %{{.*}} : tensor<304x64xf32>, vector<8x32xf32>
// CHECK:                   vector.contract {{.*}} vector<1x8x8xf32>, vector<8x32xf32> into vector<1x8x32xf32>
// CHECK:             } else {
// CHECK:           %[[ROWS2:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x?x300xf32> into tensor<?x300xf32>
// CHECK:           %[[T:.*]] = arith.ceildivui %{{.*}}, %c8
// CHECK:           tensor.insert_slice %[[ROWS2]] into %{{.*}}[0, 0] [%{{.*}}, 300] [1, 1] : tensor<?x300xf32> into tensor<?x304xf32>
// CHECK:           tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%[[T]], 8, 304] : tensor<?x304xf32> into tensor<?x8x304xf32>
// CHECK:           scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (%[[T]], 8, 64) step (8, 8, 64)
// CHECK:             %[[TILES:.*]] = affine.min
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c304{{.*}} step %c16
// CHECK:               tensor.empty() : tensor<2x16x32xf32>
// CHECK:               scf.for %{{.*}} = %{{.*}} to %[[TILES]] step %c1
// CHECK:                 vector.contract {{.*}} vector<1x8x16xf32>, vector<16x32xf32> into vector<1x8x32xf32>
// CHECK:           tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x8x64xf32> into tensor<?x64xf32>
// CHECK:           %[[Y:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 40] [1, 1] : tensor<?x64xf32> to tensor<?x40xf32>
// CHECK:           %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %c40 : tensor<3xindex>
// CHECK:           tensor.reshape %[[Y]](%[[SHAPE]]) : (tensor<?x40xf32>, tensor<3xindex>) -> tensor<?x?x40xf32>
// With threads, the branch of up to 16 rows, one cache tile of rows,
// splits the columns; more rows are taken to give cache tiles enough.
// THREADS-LABEL: func.func @dynamic_rows
// THREADS:         arith.cmpi ule, %{{.*}}, %c16
// THREADS:         scf.forall ({{.*}}) = (0, 0, 0) to (%{{.*}}, 8, 64) step (8, 8, 32)
// THREADS:         } else {
// THREADS:         scf.forall ({{.*}}) = (0, 0, 0) to (%{{.*}}, 8, 64) step (8, 8, 64)
func.func @dynamic_rows(%a: tensor<?x?x300xf32>, %b: tensor<300x40xf32>, %c: tensor<40xf32>) -> tensor<?x?x40xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<?x?x300xf32>, tensor<300x40xf32>, tensor<40xf32>) -> tensor<?x?x40xf32>
  return %y : tensor<?x?x40xf32>
}

// -----

// REPORT: not scheduled: the contraction schedule needs static K and N
// CHECK-LABEL: func.func @dynamic_k
// CHECK-NOT:     scf.if
// CHECK:         fuel.fused fused_linear
func.func @dynamic_k(%a: tensor<8x?xf32>, %b: tensor<?x32xf32>, %c: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<8x?xf32>, tensor<?x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// One row of a: register tiles of one row of four vectors (64 columns with
// AVX-512, 32 with AVX2), b's rows read in place 8 at a time, the cache
// tile as wide as b's rows up to 4096 columns (two of them here; with four
// threads, eight).
// CHECK-LABEL: func.func @one_row
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 8192) step (1, 4096)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c512{{.*}} step %c8
// CHECK-NOT:         tensor.empty
// CHECK:             scf.for %{{.*}} step %c1
// CHECK:               scf.for %{{.*}} step %c64
// CHECK:                 vector.transfer_read %arg1{{.*}} : tensor<512x8192xf32>, vector<8x64xf32>
// CHECK:                 vector.contract {{.*}} vector<1x8xf32>, vector<8x64xf32> into vector<1x64xf32>
// CHECK:           vector.broadcast %{{.*}} : vector<64xf32> to vector<1x64xf32>
// AVX2-LABEL: func.func @one_row
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 8192) step (1, 4096)
// AVX2:               vector.contract {{.*}} vector<1x8xf32>, vector<8x32xf32> into vector<1x32xf32>
// THREADS-LABEL: func.func @one_row
// THREADS:       scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 8192) step (1, 1024)
func.func @one_row(%a: tensor<1x512xf32>, %b: tensor<512x8192xf32>, %c: tensor<8192xf32>) -> tensor<1x8192xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<1x512xf32>, tensor<512x8192xf32>, tensor<8192xf32>) -> tensor<1x8192xf32>
  return %y : tensor<1x8192xf32>
}

// -----

// Three rows: padded to four, register tiles of two rows of four vectors.
// CHECK-LABEL: func.func @few_rows
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [3, 64] [1, 1] : tensor<3x64xf32> into tensor<4x64xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 128) step (4, 128)
// CHECK:           scf.for %{{.*}} step %c2
// CHECK:             scf.for %{{.*}} step %c64
// CHECK:               vector.contract {{.*}} vector<2x16xf32>, vector<16x64xf32> into vector<2x64xf32>
// AVX2-LABEL: func.func @few_rows
// AVX2:               vector.contract {{.*}} vector<2x16xf32>, vector<16x32xf32> into vector<2x32xf32>
func.func @few_rows(%a: tensor<3x64xf32>, %b: tensor<64x128xf32>, %c: tensor<128xf32>) -> tensor<3x128xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<3x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<3x128xf32>
  return %y : tensor<3x128xf32>
}

// -----

// f16 in blocks: each block's register tiles widen their own pieces of a
// and b (8 of b's rows read in place, as a has fewer than 32 rows); the
// bias is widened, added and the sum narrowed per register tile.
// CHECK-LABEL: func.func @half_blocks
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (8, 1024) step (8, 1024)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c512{{.*}} step %c8
// CHECK:             scf.for %{{.*}} step %c8
// CHECK:               scf.for %{{.*}} step %c32
// CHECK:                 vector.transfer_read %arg0{{.*}} : tensor<8x512xf16>, vector<8x8xf16>
// CHECK:                 arith.extf %{{.*}} : vector<8x8xf16> to vector<8x8xf32>
// CHECK:                 vector.transfer_read %arg1{{.*}} : tensor<512x1024xf16>, vector<8x32xf16>
// CHECK:                 arith.extf %{{.*}} : vector<8x32xf16> to vector<8x32xf32>
// CHECK:                 vector.contract {{.*}} vector<8x8xf32>, vector<8x32xf32> into vector<8x32xf32>
// CHECK:           scf.for %{{.*}} step %c8
// CHECK:             scf.for %{{.*}} step %c32
// CHECK:               arith.extf %{{.*}} : vector<32xf16> to vector<32xf32>
// CHECK:               arith.addf %{{.*}} : vector<8x32xf32>
// CHECK:               arith.truncf %{{.*}} : vector<8x32xf32> to vector<8x32xf16>
// CHECK-NOT:     vector<8x1024xf32>
func.func @half_blocks(%a: tensor<8x512xf16>, %b: tensor<512x1024xf16>, %c: tensor<1024xf16>) -> tensor<8x1024xf16> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<8x512xf16>, tensor<512x1024xf16>, tensor<1024xf16>) -> tensor<8x1024xf16>
  return %y : tensor<8x1024xf16>
}

// -----

// A dynamic batch of one row each: one row in all, and 2 to 4, run apart;
// otherwise the rows are viewed as one dynamic dim, padded and tiled as
// such.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK:         %[[B:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %[[B]], %c1
// CHECK:         scf.if %[[ONE]] -> (tensor<?x1x40xf32>) {
// CHECK:           tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x1x300xf32> into tensor<1x300xf32>
// CHECK:           vector.contract {{.*}} vector<1x8xf32>, vector<8x64xf32> into vector<1x64xf32>
// CHECK:         } else {
// CHECK:           tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x1x300xf32> into tensor<?x300xf32>
// CHECK:           tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 8, 304] : tensor<?x304xf32> into tensor<?x8x304xf32>
// CHECK:           vector.contract {{.*}} vector<1x8x16xf32>, vector<16x32xf32> into vector<1x8x32xf32>
// CHECK:           tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 1, 40] : tensor<?x40xf32> into tensor<?x1x40xf32>
func.func @dynamic_batch(%a: tensor<?x1x300xf32>, %b: tensor<300x40xf32>, %c: tensor<40xf32>) -> tensor<?x1x40xf32> {
  %y = fuel.fused fused_linear (%a, %b, %c) : (tensor<?x1x300xf32>, tensor<300x40xf32>, tensor<40xf32>) -> tensor<?x1x40xf32>
  return %y : tensor<?x1x40xf32>
}
