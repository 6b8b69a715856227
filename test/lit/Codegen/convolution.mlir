// The convolution schedule: conv2d (any stride, groups of 16 filters or
// more; stride 1 and one group first). The weight packed once per filter
// tile, [F / 32, C, kh, kw, 32], the input padded once; an scf.forall
// iteration over 32 filters and a block of tiles of 8 columns: here both
// tiles of a row, and 8 rows (narrow rows, several to an iteration), 16
// tiles. The reduction runs in blocks of channels whose weights fit 16 KiB
// (8 of 16 channels here: 8 x 3 x 3 x 32 f32): each tile of the iteration
// in turn (row t / 2, columns 8 (t mod 2) on) starts from zeros (the first
// block) or its partial sums, accumulates the block's outer products in
// registers (over c, kh and kw) and stores them. Then the bias is added
// and each tile transposed in registers, written as rows of 8 outputs into
// the iteration's slice of y.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// AVX2's registers: tiles of 4 output columns by 16 filters, the row's 4
// tiles and 4 rows in one iteration, the 16 channels in one block (9 KiB):
// each tile then goes from zeros to y in registers, without partial sums
// in memory.
// RUN: fuel-opt --split-input-file \
// RUN:   --fuel-codegen-cpu="vector-registers=16 vector-register-bits=256" %s \
// RUN:   | FileCheck %s --check-prefix=AVX2
// AVX2-LABEL: func.func @conv
// AVX2:         tensor.expand_shape {{.*}} : tensor<4x144x16xf32> into tensor<4x16x3x3x16xf32>
// AVX2:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4, 1) shared_outs(%[[OUT:.*]] = %{{.*}})
// AVX2:           %[[ROWS:.*]] = tensor.extract_slice %[[OUT]]{{.*}} [1, 16, 4, 16] [1, 1, 1, 1] : tensor<1x64x16x16xf32> to tensor<16x4x16xf32>
// AVX2-NOT:       tensor.empty
// AVX2:           scf.for %{{.*}} = %{{.*}} to %c16{{.*}} iter_args(%{{.*}} = %[[ROWS]]) -> (tensor<16x4x16xf32>)
// AVX2:             scf.for {{.*}} -> (vector<4x16xf32>)
// AVX2:                   vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<4xf32>, vector<16xf32>
// AVX2:             vector.transpose %{{.*}}, [1, 0] : vector<4x16xf32> to vector<16x4xf32>
// AVX2:           tensor.parallel_insert_slice %{{.*}} [1, 16, 4, 16] [1, 1, 1, 1] : tensor<16x4x16xf32> into tensor<1x64x16x16xf32>

// CHECK-DAG:   #[[SKIP_ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @conv
// The weight packed per tile of 32 filters, [2, 16 x 3 x 3, 32]: an
// iteration per tile, 8 weights of 8 of its filters (four squares of them)
// read, transposed by three rounds of shuffles and written as 8 rows.
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<64x16x3x3xf32> into tensor<64x144xf32>
// CHECK:         %[[PACKED:.*]] = scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<2x144x32xf32>)
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %c144 step %c8 iter_args(%{{.*}}) -> (tensor<144x32xf32>)
// CHECK-COUNT-8:     vector.transfer_read %[[FLAT]][%{{.*}}, %[[K]]]{{.*}} : tensor<64x144xf32>, vector<8xf32>
// CHECK-COUNT-24:    vector.shuffle
// CHECK-COUNT-8:     vector.transfer_write %{{.*}} : vector<8xf32>, tensor<144x32xf32>
// CHECK-COUNT-8:     vector.transfer_read %[[FLAT]][%{{.*}}, %[[K]]]{{.*}} : tensor<64x144xf32>, vector<8xf32>
// CHECK-COUNT-24:    vector.shuffle
// CHECK-COUNT-8:     vector.transfer_write %{{.*}} : vector<8xf32>, tensor<144x32xf32>
// CHECK-COUNT-8:     vector.transfer_read %[[FLAT]][%{{.*}}, %[[K]]]{{.*}} : tensor<64x144xf32>, vector<8xf32>
// CHECK-COUNT-24:    vector.shuffle
// CHECK-COUNT-8:     vector.transfer_write %{{.*}} : vector<8xf32>, tensor<144x32xf32>
// CHECK-COUNT-8:     vector.transfer_read %[[FLAT]][%{{.*}}, %[[K]]]{{.*}} : tensor<64x144xf32>, vector<8xf32>
// CHECK-COUNT-24:    vector.shuffle
// CHECK-COUNT-8:     vector.transfer_write %{{.*}} : vector<8xf32>, tensor<144x32xf32>
// CHECK-NOT:         vector.transfer_read
// CHECK:           tensor.parallel_insert_slice
// CHECK:         %[[W:.*]] = tensor.expand_shape %[[PACKED]] {{\[}}[0], [1, 2, 3], [4]] output_shape [2, 16, 3, 3, 32] : tensor<2x144x32xf32> into tensor<2x16x3x3x32xf32>
// CHECK:         linalg.fill {{.*}} -> tensor<1x16x18x18xf32>
// CHECK:         %[[XP:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 16, 16, 16] [1, 1, 1, 1]
// CHECK:         scf.forall (%{{.*}}, %[[RB:.*]], %[[FT:.*]], %{{.*}}) in (1, 2, 2, 1) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[OH0:.*]] = arith.muli %[[RB]], %c8
// CHECK:           %[[BIAS:.*]] = vector.broadcast %{{.*}} : vector<32xf32> to vector<8x32xf32>
// CHECK:           %[[ROWS:.*]] = tensor.extract_slice %[[OUT]][%{{.*}}, %{{.*}}, %[[OH0]], %{{.*}}] [1, 32, 8, 16] [1, 1, 1, 1] : tensor<1x64x16x16xf32> to tensor<32x8x16xf32>
// CHECK:           %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK:           %[[EMPTY:.*]] = tensor.empty() : tensor<16x8x32xf32>
// CHECK:           %[[SUMS:.*]] = scf.for %[[CB:.*]] = %{{.*}} to %c16{{.*}} step %c8{{.*}} iter_args(%{{.*}} = %[[EMPTY]]) -> (tensor<16x8x32xf32>)
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %[[CB]], %{{.*}}
// CHECK:             scf.for %[[T:.*]] = %{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args(%[[P:.*]] = %{{.*}}) -> (tensor<16x8x32xf32>)
// CHECK:               %[[START:.*]] = scf.if %[[FIRST]] -> (vector<8x32xf32>)
// CHECK-NEXT:            scf.yield %[[ZEROS]]
// CHECK-NEXT:          } else {
// CHECK-NEXT:            vector.transfer_read %[[P]][%[[T]], %{{.*}}, %{{.*}}]{{.*}} : tensor<16x8x32xf32>, vector<8x32xf32>
// CHECK:               %[[R:.*]] = arith.divui %[[T]], %c2
// CHECK:               %[[OH:.*]] = arith.addi %[[OH0]], %[[R]]
// CHECK:               scf.for %[[CI:.*]] = %{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %[[START]]) -> (vector<8x32xf32>)
// CHECK:                 %[[C:.*]] = arith.addi %[[CB]], %[[CI]]
// CHECK:                 scf.for %[[KH:.*]] = %{{.*}} to %c3
// CHECK:                   %[[ROW:.*]] = arith.addi %[[OH]], %[[KH]]
// CHECK:                   scf.for %[[KW:.*]] = %{{.*}} to %c3
// CHECK:                     vector.transfer_read %[[XP]][%{{.*}}, %[[C]], %[[ROW]], %{{.*}}]{{.*}} : tensor<1x16x18x18xf32>, vector<8xf32>
// CHECK:                     vector.transfer_read %[[W]][%[[FT]], %[[C]], %[[KH]], %[[KW]], %{{.*}}]{{.*}} : tensor<2x16x3x3x32xf32>, vector<32xf32>
// CHECK:                     vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<8xf32>, vector<32xf32>
// CHECK:               vector.transfer_write %{{.*}}, %[[P]][%[[T]], %{{.*}}, %{{.*}}]{{.*}} : vector<8x32xf32>, tensor<16x8x32xf32>
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[ROWS]])
// CHECK:             %[[TILE:.*]] = vector.transfer_read %[[SUMS]]
// CHECK:             arith.addf %[[TILE]], %[[BIAS]]
// CHECK:             vector.transpose %{{.*}}, [1, 0] : vector<8x32xf32> to vector<32x8xf32>
// CHECK:             vector.transfer_write {{.*}} {in_bounds = [true, true], permutation_map = #[[SKIP_ROW]]} : vector<32x8xf32>, tensor<32x8x16xf32>
// CHECK:         scf.forall.in_parallel
// CHECK-NEXT:      tensor.parallel_insert_slice %{{.*}} into %[[OUT]]{{.*}} [1, 32, 8, 16] [1, 1, 1, 1] : tensor<32x8x16xf32> into tensor<1x64x16x16xf32>
func.func @conv(%x: tensor<1x16x16x16xf32>, %w: tensor<64x16x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x16x16xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>} (%x, %w, %b) : (tensor<1x16x16x16xf32>, tensor<64x16x3x3xf32>, tensor<64xf32>) -> tensor<1x64x16x16xf32>
  return %y : tensor<1x64x16x16xf32>
}

// -----

// Stride 2, two groups of 32 filters: the input padded once (38 columns:
// the last tile's 16 pixels from column 2 * 8 + 6 end at 37), no copy into
// stride phases; kernel row kh of output row oh reads input row 2 oh + kh,
// 16 consecutive pixels from column 2 ow + kw, every second kept by one
// shuffle; a filter tile reads its group's channels, from (f0 / 32) * 4
// on (in blocks of 2: 2 x 7 x 7 x 32 f32 are 12.25 KiB), and its packed
// weight at its own channels. The weight's 4 x 7 x 7 = 196 per filter
// are packed as 24 squares of 8 and a last one of 4: its rows read with
// zeros past 196 (no in_bounds), 4 of its 8 transposed rows written.
// CHECK-LABEL: func.func @strided_grouped
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape {{.*}} into tensor<64x196xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c192 step %c8
// CHECK:           }
// CHECK-COUNT-8:   vector.transfer_read %[[FLAT]][%{{.*}}, %c192{{.*}}], %{{[^ ]*}} : tensor<64x196xf32>, vector<8xf32>
// CHECK-COUNT-4:   vector.transfer_write %{{.*}} : vector<8xf32>, tensor<196x32xf32>
// CHECK-NOT:       vector.transfer_write
// CHECK:           vector.transfer_read %[[FLAT]][%{{.*}}, %c192{{.*}}], %{{[^ ]*}} : tensor<64x196xf32>, vector<8xf32>
// CHECK:         %[[XP:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 3, 3] [1, 8, 32, 32] [1, 1, 1, 1] : tensor<1x8x32x32xf32> into tensor<1x8x38x38xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         scf.forall (%{{.*}}, %[[RB:.*]], %[[FT:.*]], %{{.*}}) in (1, 2, 2, 1)
// CHECK:           %[[OH0:.*]] = arith.muli %[[RB]], %c8
// CHECK:           %[[F0:.*]] = arith.muli %[[FT]], %c32
// CHECK:           %[[G:.*]] = arith.divui %[[F0]], %c32
// CHECK:           %[[C0:.*]] = arith.muli %[[G]], %c4
// CHECK:           scf.for %[[CB:.*]] = %{{.*}} to %c4{{.*}} step %c2
// CHECK:               %[[OH:.*]] = arith.addi %[[OH0]], %{{.*}}
// CHECK:               %[[OW:.*]] = arith.addi %{{.*}}, %{{.*}}
// CHECK:                 %[[C:.*]] = arith.addi %[[CB]], %{{.*}}
// CHECK:                 %[[CH:.*]] = arith.addi %[[C0]], %[[C]]
// CHECK:                 scf.for %[[KH:.*]] = %{{.*}} to %c7
// CHECK:                   %[[FIRST:.*]] = arith.muli %[[OH]], %c2
// CHECK:                   %[[ROW:.*]] = arith.addi %[[FIRST]], %[[KH]]
// CHECK:                   scf.for %[[KW:.*]] = %{{.*}} to %c7
// CHECK:                     %[[LEFT:.*]] = arith.muli %[[OW]], %c2
// CHECK:                     %[[COL:.*]] = arith.addi %[[LEFT]], %[[KW]]
// CHECK:                     %[[PIX:.*]] = vector.transfer_read %[[XP]][%{{.*}}, %[[CH]], %[[ROW]], %[[COL]]]{{.*}} : tensor<1x8x38x38xf32>, vector<16xf32>
// CHECK:                     %[[EVERY:.*]] = vector.shuffle %[[PIX]], %[[PIX]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK:                     vector.transfer_read %{{.*}}[%[[FT]], %[[C]], %[[KH]], %[[KW]], %{{.*}}]{{.*}} : tensor<2x4x7x7x32xf32>, vector<32xf32>
// CHECK:                     vector.outerproduct %[[EVERY]]
func.func @strided_grouped(%x: tensor<1x8x32x32xf32>, %w: tensor<64x4x7x7xf32>) -> tensor<1x64x16x16xf32> {
  %y = fuel.fused conv2d {stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, groups = 2 : i64} (%x, %w) : (tensor<1x8x32x32xf32>, tensor<64x4x7x7xf32>) -> tensor<1x64x16x16xf32>
  return %y : tensor<1x64x16x16xf32>
}

// -----

// A dynamic batch: the padded input (18 columns for two tiles of 4 output
// columns 2 apart), the forall and the result take it from x.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK:         %[[B:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x4x9x9xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [%[[B]], 4, 9, 9] [1, 1, 1, 1] : tensor<?x4x9x9xf32> into tensor<?x4x9x18xf32>
// CHECK:         %[[NB:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x4x9x18xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (%[[NB]], 1, 2, 1)
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [%[[NB]], 32, 4, 4] [1, 1, 1, 1] : tensor<?x32x4x8xf32> to tensor<?x32x4x4xf32>
func.func @dynamic_batch(%x: tensor<?x4x9x9xf32>, %w: tensor<32x2x3x3xf32>) -> tensor<?x32x4x4xf32> {
  %y = fuel.fused conv2d {stride = array<i64: 2, 2>, groups = 2 : i64} (%x, %w) : (tensor<?x4x9x9xf32>, tensor<32x2x3x3xf32>) -> tensor<?x32x4x4xf32>
  return %y : tensor<?x32x4x4xf32>
}

// -----

// A strided filters-major (here depthwise) tile reads its pixels as the
// others do: 2 x 16 consecutive pixels of input row 2 oh + kh, every
// second kept by one shuffle (the padded width covers the last tile's
// extra pixel: (16 - 1) * 2 + 3 + 1 = 34).
// CHECK-LABEL: func.func @depthwise_strided
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 8, 15, 15] [1, 1, 1, 1] : tensor<1x8x15x15xf32> into tensor<1x8x17x34xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 8, 1)
// CHECK:           vector.transfer_read {{.*}} : tensor<1x8x17x34xf32>, vector<32xf32>
// CHECK:           vector.shuffle %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK:           vector.outerproduct {{.*}} : vector<1xf32>, vector<16xf32>
func.func @depthwise_strided(%x: tensor<1x8x15x15xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, groups = 8 : i64} (%x, %w) : (tensor<1x8x15x15xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// A dynamic height and width: the output's rows and columns, its columns
// in whole tiles of 8 and the padded input's size computed from x's at run
// time (affine maps of them; with padding 1 the output has x's height); the
// forall runs over them and the result is cut to them.
// CHECK-LABEL: func.func @dynamic_height_width
// CHECK-DAG:     %[[H:.*]] = tensor.dim %arg0, %c2{{.*}} : tensor<1x4x?x?xf32>
// CHECK-DAG:     %[[W:.*]] = tensor.dim %arg0, %c3{{.*}} : tensor<1x4x?x?xf32>
// CHECK:         affine.apply #{{.*}}()[%[[W]]]
// CHECK:         affine.max #{{.*}}()[%[[W]]]
// CHECK:         tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<1x4x?x?xf32> into tensor<1x4x?x?xf32>
// CHECK:         %[[Y:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, %[[H]], 1, %{{.*}}) shared_outs
// CHECK:         tensor.extract_slice %[[Y]][0, 0, 0, 0] [1, 16, %[[H]], %[[W]]] [1, 1, 1, 1] : tensor<1x16x?x?xf32> to tensor<1x16x?x?xf32>
// CHECK-NOT:     fuel.fused
func.func @dynamic_height_width(%x: tensor<1x4x?x?xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x?x?xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>} (%x, %w) : (tensor<1x4x?x?xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x?x?xf32>
  return %y : tensor<1x16x?x?xf32>
}

// -----

// Dynamic channels, and a transposed convolution's dynamic height, are left
// to the decomposition.
// CHECK-LABEL: func.func @dynamic_unscheduled
// CHECK:         fuel.fused conv2d
// CHECK:         fuel.fused conv_transpose_2d
// REPORT: conv2d not scheduled: the convolution schedule needs static channels and kernel sizes
// REPORT: conv_transpose_2d not scheduled: the convolution schedule needs static shapes but for the batch in a transposed convolution
func.func @dynamic_unscheduled(%x: tensor<1x?x8x8xf32>, %w: tensor<16x?x3x3xf32>, %xt: tensor<1x4x?x5xf32>, %wt: tensor<4x16x3x3xf32>) -> (tensor<1x16x6x6xf32>, tensor<1x16x?x7xf32>) {
  %y = fuel.fused conv2d (%x, %w) : (tensor<1x?x8x8xf32>, tensor<16x?x3x3xf32>) -> tensor<1x16x6x6xf32>
  %t = fuel.fused conv_transpose_2d (%xt, %wt) : (tensor<1x4x?x5xf32>, tensor<4x16x3x3xf32>) -> tensor<1x16x?x7xf32>
  return %y, %t : tensor<1x16x6x6xf32>, tensor<1x16x?x7xf32>
}

// -----

// Output widths off the register tile (4 and 6 columns) are computed in
// whole tiles of 8, the input padded with zeros on the right for them, and
// the result sliced; the tile that holds the last columns accumulates only
// those (4 of 8 here, a narrower accumulator), tiles past them nothing. Fewer than 16 filters per group (8 here) get
// filters-major tiles: 4 filters by a vector of 16 output columns, each
// filter's weight broadcast over the pixels, no transpose.
// CHECK-LABEL: func.func @widths_and_groups
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x16x4x8xf32>)
// CHECK:           %[[WHOLE:.*]] = arith.cmpi ule, %{{.*}}, %c4
// CHECK:           scf.if %[[WHOLE]] -> (vector<8x16xf32>)
// CHECK:             vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<8xf32>, vector<16xf32>
// CHECK:           } else {
// CHECK:             %[[PART:.*]] = arith.cmpi ult, %{{.*}}, %c4
// CHECK:             scf.if %[[PART]] -> (vector<8x16xf32>)
// CHECK:               vector.extract_strided_slice %{{.*}} {offsets = [0, 0], sizes = [4, 16], strides = [1, 1]} : vector<8x16xf32> to vector<4x16xf32>
// CHECK:               vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<4xf32>, vector<16xf32>
// CHECK:               vector.insert_strided_slice %{{.*}}, %{{.*}} {offsets = [0, 0], strides = [1, 1]} : vector<4x16xf32> into vector<8x16xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 4, 4] [1, 1, 1, 1] : tensor<1x16x4x8xf32> to tensor<1x16x4x4xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 6, 4, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x16x6x16xf32>)
// CHECK:           vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<4xf32>, vector<16xf32>
// CHECK-NOT:       vector.transpose
// CHECK:           vector.transfer_write %{{.*}} : vector<4x16xf32>, tensor<4x16xf32>
// CHECK:         tensor.extract_slice %{{.*}} : tensor<1x16x6x16xf32> to tensor<1x16x6x6xf32>
// CHECK:         scf.forall {{.*}} -> (tensor<1x16x6x8xf32>)
// CHECK:         tensor.extract_slice %{{.*}} : tensor<1x16x6x8xf32> to tensor<1x16x6x6xf32>
// REPORT-NOT: not scheduled
func.func @widths_and_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<16x4x3x3xf32>, %wg: tensor<16x2x3x3xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>) {
  %0 = fuel.fused conv2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x4x4xf32>
  %1 = fuel.fused conv2d {groups = 2 : i64} (%x, %wg) : (tensor<1x4x8x8xf32>, tensor<16x2x3x3xf32>) -> tensor<1x16x6x6xf32>
  %2 = fuel.fused conv2d (%x, %w) : (tensor<1x4x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %0, %1, %2 : tensor<1x16x4x4xf32>, tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>
}

// -----

// conv_transpose_2d with stride 2, as its 2 x 2 output phases: y[.., 2q + r,
// ..] takes the kernel rows kh = 1 - 2t (r = 0: one) or 2 - 2t (r = 1:
// two), the input rows q + t (likewise columns). The input is padded once
// (a column and a row of zeros at the end, for phase 1's second tap). The
// weight, as [4, 16, 9] (each channel's filters' 9 taps in a row), is
// packed once for all four phases, in squares of 8 filters by 8 taps
// transposed in registers, each square's vectors written into the packed
// weights [1, c, th, tw, 16] (flipped: kh descending) of the phases whose
// taps they are: of taps 0-7, 1 to phase (0, 0), 2 to each of (0, 1) and
// (1, 0), 3 to (1, 1); tap 8 (a square read with zeros past the 9th) to
// (1, 1). Each phase reads its slice of the input through its own packed
// weight into a [1, 16, 8, 8] tensor of its own, inserted into y 2 apart:
// a quarter of the multiply-adds of convolving the input spread out.
// CHECK-LABEL: func.func @transposed
// CHECK:         %[[XP:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<1x4x9x9xf32>
// CHECK:         %[[Y:.*]] = tensor.empty() : tensor<1x16x16x16xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<4x16x3x3xf32> into tensor<4x16x9xf32>
// CHECK:         %[[PACKED:.*]]:4 = scf.forall (%{{.*}}) in (1) shared_outs({{.*}}) -> (tensor<1x4x1x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x4x16xf32>)
// CHECK:           scf.for %[[C:[a-z0-9_]+]] = {{.*}} -> (tensor<4x1x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x4x16xf32>)
// CHECK-COUNT-8:     vector.transfer_read %[[FLAT]][%{{.*}}, %{{.*}}, %c0{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<4x16x9xf32>, vector<8xf32>
// CHECK:             vector.transfer_write %{{.*}}[%[[C]], %c0{{.*}}, %c0{{.*}}] {{.*}}: vector<8xf32>, tensor<4x1x16xf32>
// CHECK-COUNT-2:     vector.transfer_write {{.*}} : vector<8xf32>, tensor<4x2x16xf32>
// CHECK-COUNT-2:     vector.transfer_write {{.*}} : vector<8xf32>, tensor<4x2x16xf32>
// CHECK-COUNT-3:     vector.transfer_write {{.*}} : vector<8xf32>, tensor<4x4x16xf32>
// CHECK-NOT:         vector.transfer_write
// CHECK:             vector.transfer_read %[[FLAT]][%{{.*}}, %{{.*}}, %c0{{.*}}]
// CHECK:             vector.transfer_read %[[FLAT]][%{{.*}}, %{{.*}}, %c8{{.*}}], %{{[^ ]*}} : tensor<4x16x9xf32>, vector<8xf32>
// CHECK:             vector.transfer_write %{{.*}}[%[[C]], %c0{{.*}}, %c0{{.*}}] {{.*}}: vector<8xf32>, tensor<4x4x16xf32>
// CHECK:         %[[W00:.*]] = tensor.expand_shape %[[PACKED]]#0 {{.*}} into tensor<1x4x1x1x16xf32>
// CHECK:         tensor.expand_shape %[[PACKED]]#1 {{.*}} into tensor<1x4x1x2x16xf32>
// CHECK:         tensor.expand_shape %[[PACKED]]#2 {{.*}} into tensor<1x4x2x1x16xf32>
// CHECK:         %[[W11:.*]] = tensor.expand_shape %[[PACKED]]#3 {{.*}} into tensor<1x4x2x2x16xf32>
// CHECK:         tensor.extract_slice %[[XP]][0, 0, 0, 0] [1, 4, 8, 8]
// CHECK:         %[[P00:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 1, 1)
// CHECK:               vector.transfer_read %[[W00]]
// CHECK:               vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<8xf32>, vector<16xf32>
// CHECK:         %[[Y00:.*]] = tensor.insert_slice %[[P00]] into %[[Y]][0, 0, 0, 0] [1, 16, 8, 8] [1, 1, 2, 2]
// CHECK:         %[[Y01:.*]] = tensor.insert_slice %{{.*}} into %[[Y00]][0, 0, 0, 1] [1, 16, 8, 8] [1, 1, 2, 2]
// CHECK:         %[[Y10:.*]] = tensor.insert_slice %{{.*}} into %[[Y01]][0, 0, 1, 0] [1, 16, 8, 8] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[XP]][0, 0, 0, 0] [1, 4, 9, 9]
// CHECK:         %[[P11:.*]] = scf.forall
// CHECK:               vector.transfer_read %[[W11]]
// CHECK:         %[[Y11:.*]] = tensor.insert_slice %[[P11]] into %[[Y10]][0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 2, 2]
// CHECK:         return %[[Y11]]
func.func @transposed(%x: tensor<1x4x8x8xf32>, %w: tensor<4x16x3x3xf32>) -> tensor<1x16x16x16xf32> {
  %y = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  return %y : tensor<1x16x16x16xf32>
}

// -----

// Two groups of 16 filters, padding 3 past the kernel: phase (0, 0) takes
// kernel row 1 at input row q + 1 (a slice of the input from row 1 on, no
// padding before it); filter f reads the channels of its group, (f / 16) *
// 4 on, and the packing of filter tile ft (16 ft + fi) reads the weights
// w[(f / 16) * 4 + c, f mod 16, ..].
// CHECK-LABEL: func.func @transposed_grouped
// CHECK:         %[[XP:.*]] = tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 8, 5, 6] [1, 1, 1, 1] : tensor<1x8x5x6xf32> into tensor<1x8x5x10xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} into tensor<8x16x9xf32>
// CHECK:         scf.forall (%[[PT:.*]]) in (2) {{.*}} -> (tensor<2x4x1x16xf32>, tensor<2x4x2x16xf32>, tensor<2x4x2x16xf32>, tensor<2x4x4x16xf32>)
// CHECK:           %[[PF0:.*]] = arith.muli %[[PT]], %c16
// CHECK:           %[[PG:.*]] = arith.divui %[[PF0]], %c16
// CHECK:           %[[LOCAL:.*]] = arith.remui %[[PF0]], %c16
// CHECK:           %[[PC0:.*]] = arith.muli %[[PG]], %c4
// CHECK:           scf.for %[[C:[a-z0-9_]+]] = {{.*}} to %c4
// CHECK:             %[[CH:.*]] = arith.addi %[[PC0]], %[[C]]
// CHECK:             %[[F:.*]] = arith.addi %[[LOCAL]], %{{.*}}
// CHECK:             vector.transfer_read %[[FLAT]][%[[CH]], %[[F]], %{{.*}}]
// CHECK:         tensor.extract_slice %[[XP]][0, 0, 1, 1] [1, 8, 3, 8]
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %[[FT:.*]], %{{.*}}) in (1, 1, 2, 1)
// CHECK:           %[[F0:.*]] = arith.muli %[[FT]], %c16
// CHECK:           %[[G:.*]] = arith.divui %[[F0]], %c16
// CHECK:           arith.muli %[[G]], %c4
// CHECK:         tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 32, 3, 4] [1, 1, 2, 2] : tensor<1x32x3x4xf32> into tensor<1x32x6x8xf32>
func.func @transposed_grouped(%x: tensor<1x8x5x6xf32>, %w: tensor<8x16x3x3xf32>) -> tensor<1x32x6x8xf32> {
  %y = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, output_padding = array<i64: 1, 1>, groups = 2 : i64} (%x, %w) : (tensor<1x8x5x6xf32>, tensor<8x16x3x3xf32>) -> tensor<1x32x6x8xf32>
  return %y : tensor<1x32x6x8xf32>
}

// -----

// REPORT: not scheduled: the convolution schedule handles transposed convolutions with dilation 1
func.func @transposed_unscheduled(%x: tensor<1x4x8x8xf32>, %w: tensor<4x16x3x3xf32>) -> tensor<1x16x6x6xf32> {
  %y = fuel.fused conv_transpose_2d {padding = array<i64: 3, 3>, dilation = array<i64: 2, 2>} (%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// causal_conv1d: one scf.forall iteration per (batch, channel); the bias
// and the K = 3 weights read once per channel as vectors; along time, each
// vector of 16 outputs adds the 3 shifted input vectors times their
// weights, then SiLU, and is written once; the last 4 of 20 under masks
// of the lanes left in the rows (22 - (16 + j) of x, 20 - 16 of y).
// CHECK-LABEL: func.func @causal
// CHECK:         scf.forall (%[[B:.*]], %[[C:.*]]) in (2, 5)
// CHECK-COUNT-4:   vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:           scf.for %[[T:.*]] = %{{.*}} to %c16{{.*}} step %c16
// CHECK:             vector.transfer_read %{{.*}}[%[[B]], %[[C]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<2x5x22xf32>, vector<16xf32>
// CHECK-COUNT-3:     math.fma %{{.*}} : vector<16xf32>
// CHECK:             math.exp %{{.*}} : vector<16xf32>
// CHECK:             arith.divf %{{.*}} : vector<16xf32>
// CHECK:             vector.transfer_write %{{.*}}, %{{.*}}[%[[T]]] {in_bounds = [true]} : vector<16xf32>, tensor<20xf32>
// CHECK:           %[[XM:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK:           vector.transfer_read %{{.*}}[%[[B]], %[[C]], %{{.*}}], %{{.*}}, %[[XM]] {in_bounds = [true]} : tensor<2x5x22xf32>, vector<16xf32>
// CHECK:           vector.transfer_write %{{.*}}, %{{.*}}[%c16{{.*}}], %{{.*}} {in_bounds = [true]} : vector<16xf32>, tensor<20xf32>
// CHECK:         scf.forall.in_parallel
// CHECK-NOT:     linalg.generic
func.func @causal(%x: tensor<2x5x22xf32>, %w: tensor<5x1x3xf32>, %b: tensor<5xf32>) -> tensor<2x5x20xf32> {
  %y = fuel.fused causal_conv1d {use_silu = true} (%x, %w, %b) : (tensor<2x5x22xf32>, tensor<5x1x3xf32>, tensor<5xf32>) -> tensor<2x5x20xf32>
  return %y : tensor<2x5x20xf32>
}

// -----

// A dynamic batch and length: the loop over whole vectors to the length
// less its remainder, the rest under masks when there is one.
// CHECK-LABEL: func.func @causal_dynamic
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 5)
// CHECK:           %[[REM:.*]] = arith.remui %{{.*}}, %c16
// CHECK:           %[[WHOLE:.*]] = arith.subi %{{.*}}, %[[REM]]
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %[[WHOLE]] step %c16
// CHECK:           scf.if %{{.*}} -> (tensor<?xf32>)
// CHECK:             vector.create_mask
func.func @causal_dynamic(%x: tensor<?x5x?xf32>, %w: tensor<5x1x3xf32>, %b: tensor<5xf32>) -> tensor<?x5x?xf32> {
  %y = fuel.fused causal_conv1d (%x, %w, %b) : (tensor<?x5x?xf32>, tensor<5x1x3xf32>, tensor<5xf32>) -> tensor<?x5x?xf32>
  return %y : tensor<?x5x?xf32>
}

// -----

// REPORT: not scheduled: the convolution schedule needs static channels and kernel
func.func @causal_dynamic_channels(%x: tensor<1x?x8xf32>, %w: tensor<?x1x3xf32>, %b: tensor<?xf32>) -> tensor<1x?x6xf32> {
  %y = fuel.fused causal_conv1d (%x, %w, %b) : (tensor<1x?x8xf32>, tensor<?x1x3xf32>, tensor<?xf32>) -> tensor<1x?x6xf32>
  return %y : tensor<1x?x6xf32>
}

// -----

// REPORT: not scheduled: the convolution schedule needs a result that is not empty
func.func @causal_empty(%x: tensor<0x5x22xf32>, %w: tensor<5x1x3xf32>, %b: tensor<5xf32>) -> tensor<0x5x20xf32> {
  %y = fuel.fused causal_conv1d (%x, %w, %b) : (tensor<0x5x22xf32>, tensor<5x1x3xf32>, tensor<5xf32>) -> tensor<0x5x20xf32>
  return %y : tensor<0x5x20xf32>
}

// -----

// Depthwise (one filter per group): tiles of one filter by 64 output
// columns (4 vectors), the filter's weight broadcast over the pixels, its
// bias along the tile's row; 56 columns computed as 64 and sliced.
// CHECK-LABEL: func.func @depthwise
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 56, 32, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x32x56x64xf32>)
// CHECK:           vector.outerproduct %{{.*}}, %{{.*}}, %{{.*}} {kind = #vector.kind<add>} : vector<1xf32>, vector<64xf32>
// CHECK:           vector.shape_cast %{{.*}} : vector<1xf32> to vector<1x1xf32>
// CHECK:           vector.broadcast %{{.*}} : vector<1x1xf32> to vector<1x64xf32>
// CHECK:           vector.transfer_write %{{.*}} : vector<1x64xf32>, tensor<1x64xf32>
// CHECK:         tensor.extract_slice %{{.*}} : tensor<1x32x56x64xf32> to tensor<1x32x56x56xf32>
func.func @depthwise(%x: tensor<1x32x56x56xf32>, %w: tensor<32x1x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x56x56xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>, groups = 32 : i64} (%x, %w, %b) : (tensor<1x32x56x56xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x56x56xf32>
  return %y : tensor<1x32x56x56xf32>
}
