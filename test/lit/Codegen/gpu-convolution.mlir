// The GPU form of the convolution schedule: a thread per register tile of
// 4 output columns by up to 4 filters accumulated over (kh, kw, c); a
// block of an output row's column tiles (x) by filter tiles (y) by output
// rows (z, enough for 128 threads); causal_conv1d a thread per 4 outputs.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// 15 channels (C * kh * kw not a multiple of 8: not staged, below).
// 56 columns: 14 column tiles; 64 filters: 16 tiles of 4; 224 threads, a
// row a block, 112 blocks (2 images of 56 rows). The padded input and the
// transposed weight are loop nests before the kernel.
// CHECK-LABEL: func.func @conv
// CHECK-NOT:     fuel.fused
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x3x15x64xf32>)
// CHECK:         tensor.insert_slice %{{.*}}[0, 0, 1, 1] [2, 15, 56, 56]
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (112, 1, 1) {{.*}} -> (tensor<2x64x56x56xf32>)
// CHECK:           tensor.extract_slice {{.*}} [1, 64, 1, 56] [1, 1, 1, 1] : tensor<2x64x56x56xf32> to tensor<64x1x56xf32>
// CHECK:           scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 16, 14) {{.*}} -> (tensor<64x1x56xf32>)
// CHECK:             scf.for {{.*}} -> (vector<4x4xf32>)
// CHECK:               scf.for {{.*}} -> (vector<4x4xf32>)
// CHECK:                 scf.for {{.*}} -> (vector<4x4xf32>)
// CHECK:                   vector.transfer_read {{.*}} : tensor<2x15x58x58xf32>, vector<4xf32>
// CHECK:                   vector.transfer_read {{.*}} : tensor<3x3x15x64xf32>, vector<4xf32>
// CHECK:                   vector.outerproduct {{.*}} : vector<4xf32>, vector<4xf32>
// CHECK:             tensor.parallel_insert_slice {{.*}} [4, 1, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<64x1x56xf32>
// CHECK:           } {mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @conv(%x: tensor<2x15x56x56xf32>, %w: tensor<64x15x3x3xf32>, %b: tensor<64xf32>) -> tensor<2x64x56x56xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>} (%x, %w, %b) : (tensor<2x15x56x56xf32>, tensor<64x15x3x3xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  return %y : tensor<2x64x56x56xf32>
}

// -----

// One group, 64 filters, 56 x 56 output pixels, C * kh * kw = 144: an
// implicit matrix product per image (z), 32 filters by 64 pixels a block
// (64 by 64 would give 98 blocks, fewer than the default 108
// multiprocessors), the weight's [32, 16] and the pixels' [16, 64] tiles
// staged in workgroup
// memory at each step of 16 along (c, kh, kw), the padding read as zeros
// (no padded copy of the input), the bias added as the tiles are written.
// CHECK-LABEL: func.func @staged
// CHECK-NOT:     tensor<2x16x58x58xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 49) {{.*}} -> (tensor<2x64x3136xf32>)
// CHECK:           scf.for {{.*}} to %c144{{.*}} step %c16{{.*}} -> (tensor<8x16x4x4xf32>)
// CHECK:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
// CHECK:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x64xf32>
// CHECK:             arith.select {{.*}} : f32
// CHECK:             vector.contract {{.*}} : vector<4x16xf32>, vector<16x4xf32> into vector<4x4xf32>
// CHECK:           vector.transfer_read %arg2{{.*}} : tensor<64xf32>, vector<4xf32>
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         tensor.collapse_shape {{.*}} : tensor<2x64x3136xf32> into tensor<401408xf32>
// CHECK:         tensor.expand_shape {{.*}} into tensor<2x64x56x56xf32>
func.func @staged(%x: tensor<2x16x56x56xf32>, %w: tensor<64x16x3x3xf32>, %b: tensor<64xf32>) -> tensor<2x64x56x56xf32> {
  %y = fuel.fused conv2d {padding = array<i64: 1, 1>} (%x, %w, %b) : (tensor<2x16x56x56xf32>, tensor<64x16x3x3xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  return %y : tensor<2x64x56x56xf32>
}

// -----

// Depthwise, stride 2, 150 output columns: 38 tiles, 2 blocks of 19
// (the count from 16 to 32 that pads least: 152 columns); a filter a
// tile; each thread reads 8 consecutive pixels and keeps every other.
// 8 filters by 19 tiles is 152 threads: one row a block.
// CHECK-LABEL: func.func @depthwise
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (8, 1, 2) {{.*}} -> (tensor<1x8x8x152xf32>)
// CHECK:           scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 19)
// CHECK:             vector.transfer_read {{.*}} vector<8xf32>
// CHECK:             vector.shuffle {{.*}} [0, 2, 4, 6]
// CHECK:             vector.outerproduct {{.*}} : vector<1xf32>, vector<4xf32>
// CHECK:         tensor.extract_slice {{.*}} to tensor<1x8x8x150xf32>
func.func @depthwise(%x: tensor<1x8x16x300xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x150xf32> {
  %y = fuel.fused conv2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 8 : i64} (%x, %w) : (tensor<1x8x16x300xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x150xf32>
  return %y : tensor<1x8x8x150xf32>
}

// -----

// A transposed convolution of 8 filters, 28 output columns (7 tiles): 14
// threads a row, so a block takes 14 of the 28 rows (196 threads).
// CHECK-LABEL: func.func @transposed
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 1, 1) {{.*}} -> (tensor<1x8x28x28xf32>)
// CHECK:           scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (14, 2, 7)
func.func @transposed(%x: tensor<1x16x14x14xf32>, %w: tensor<16x8x4x4xf32>) -> tensor<1x8x28x28xf32> {
  %y = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} (%x, %w) : (tensor<1x16x14x14xf32>, tensor<16x8x4x4xf32>) -> tensor<1x8x28x28xf32>
  return %y : tensor<1x8x28x28xf32>
}

// -----

// Two groups of 16 filters (too few to stage): the register tiles read the
// input spread out, which takes one group, so it lowers as decomposed.
// REPORT: remark: fuel-codegen-gpu: {{.*}} not scheduled: the GPU convolution schedule's register tiles handle transposed convolutions with one group and padding below the kernel size
// CHECK-LABEL: func.func @transposed_grouped
// CHECK-NOT:     #gpu.thread
func.func @transposed_grouped(%x: tensor<1x8x5x6xf32>, %w: tensor<8x16x3x3xf32>) -> tensor<1x32x10x11xf32> {
  %y = fuel.fused conv_transpose_2d {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64} (%x, %w) : (tensor<1x8x5x6xf32>, tensor<8x16x3x3xf32>) -> tensor<1x32x10x11xf32>
  return %y : tensor<1x32x10x11xf32>
}

// -----

// conv_transpose_2d of 2 groups with dilation 2 (which the register-tile
// form declines): staged per (image, group) on z, the pixels a tap meets
// between the strided inputs read as zeros (no spread copy of the input);
// 32 x 32 tiles, the smallest, where 64 blocks are fewer than the default
// 108 multiprocessors.
// CHECK-LABEL: func.func @transposed_staged
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 1, 32) {{.*}} -> (tensor<2x32x1024xf32>)
// CHECK:           scf.for {{.*}} to %c144{{.*}} step %c16
// CHECK:             arith.remsi
// CHECK:             vector.contract {{.*}} : vector<4x16xf32>, vector<16x4xf32> into vector<4x4xf32>
// CHECK:         tensor.collapse_shape {{.*}} : tensor<2x32x1024xf32> into tensor<65536xf32>
// CHECK:         tensor.expand_shape {{.*}} : tensor<65536xf32> into tensor<1x64x32x32xf32>
func.func @transposed_staged(%x: tensor<1x32x15x15xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x64x32x32xf32> {
  %y = fuel.fused conv_transpose_2d {dilation = array<i64: 2, 2>, groups = 2 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} (%x, %w) : (tensor<1x32x15x15xf32>, tensor<32x32x3x3xf32>) -> tensor<1x64x32x32xf32>
  return %y : tensor<1x64x32x32xf32>
}

// -----

// causal_conv1d, 1,030 outputs: stretches of 256 threads x 4 = 1,024, two
// a channel (the row padded to 2,048, the second stretch's reads past x
// masked), the channel's 4 weights read once per thread.
// CHECK-LABEL: func.func @causal
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 64, 2) {{.*}} -> (tensor<2x64x2048xf16>)
// CHECK-COUNT-4:   tensor.extract %{{.*}} : tensor<64x1x4xf16>
// CHECK:           scf.forall (%{{.*}}) in (256) {{.*}} -> (tensor<1024xf16>)
// CHECK-COUNT-4:     vector.transfer_read {{.*}}, %{{.*}} : tensor<2x64x1033xf16>, vector<4xf16>
// CHECK:             math.exp {{.*}} : vector<4xf32>
// CHECK:             arith.truncf {{.*}} to vector<4xf16>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         tensor.extract_slice {{.*}} to tensor<2x64x1030xf16>
func.func @causal(%x: tensor<2x64x1033xf16>, %w: tensor<64x1x4xf16>, %b: tensor<64xf16>) -> tensor<2x64x1030xf16> {
  %y = fuel.fused causal_conv1d {use_silu = true} (%x, %w, %b) : (tensor<2x64x1033xf16>, tensor<64x1x4xf16>, tensor<64xf16>) -> tensor<2x64x1030xf16>
  return %y : tensor<2x64x1030xf16>
}

// -----

// The grid's y and z take at most 65535 blocks: batches times output rows
// past that (and channels past it for causal_conv1d) lower as decomposed.
// REPORT: remark: fuel-codegen-gpu: {{.*}} not scheduled: the GPU convolution schedule takes at most 65535 filters, and batches times output rows
// CHECK-LABEL: func.func @too_many_rows
// CHECK-NOT:     #gpu.thread
func.func @too_many_rows(%x: tensor<2x1x40000x4xf32>, %w: tensor<4x1x1x1xf32>) -> tensor<2x4x40000x4xf32> {
  %y = fuel.fused conv2d (%x, %w) : (tensor<2x1x40000x4xf32>, tensor<4x1x1x1xf32>) -> tensor<2x4x40000x4xf32>
  return %y : tensor<2x4x40000x4xf32>
}

// -----

// REPORT: remark: fuel-codegen-gpu: {{.*}} not scheduled: the GPU convolution schedule takes at most 65535 channels and batches
// CHECK-LABEL: func.func @too_many_channels
// CHECK-NOT:     #gpu.thread
func.func @too_many_channels(%x: tensor<1x70000x7xf32>, %w: tensor<70000x1x4xf32>, %b: tensor<70000xf32>) -> tensor<1x70000x4xf32> {
  %y = fuel.fused causal_conv1d (%x, %w, %b) : (tensor<1x70000x7xf32>, tensor<70000x1x4xf32>, tensor<70000xf32>) -> tensor<1x70000x4xf32>
  return %y : tensor<1x70000x4xf32>
}
