// fused_linear on a GPU with its operands staged in workgroup memory (M and
// N multiples of 32, K of 8): a block per tile of the output; in the
// block's body the accumulators (a 4 x 4 tile per thread) are zeroed, then
// an scf.for along K stages the A and B tiles (a thread loop whose shared
// outputs are workgroup tensors) and accumulates from them (a thread loop
// of vector.contract); a last thread loop adds the bias and writes.
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="compute-units=32" %s \
// RUN:   | FileCheck %s
// RUN: fuel-opt --split-input-file \
// RUN:   --fuel-codegen-gpu="max-threads=128 compute-units=32" %s \
// RUN:   | FileCheck %s --check-prefix=T128
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="compute-units=33" %s \
// RUN:   | FileCheck %s --check-prefix=HALF
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu %s \
// RUN:   | FileCheck %s --check-prefix=SMALL
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="max-threads=32" %s \
// RUN:   | FileCheck %s --check-prefix=T32
// RUN: fuel-opt --split-input-file --fuel-codegen-gpu="compute-units=8" %s \
// RUN:   | FileCheck %s --check-prefix=LARGE
// RUN: not fuel-opt --fuel-codegen-gpu="compute-units=0" %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: fuel-codegen-gpu: compute-units must be at least 1, got 0

// CHECK-LABEL: func.func @linear
// CHECK-NOT:     fuel.fused
// CHECK:         scf.forall (%[[BM:.*]], %[[BN:.*]]) in (4, 8) shared_outs
// CHECK:           %[[ACC0:.*]] = scf.forall (%{{.*}}, %{{.*}}) in (16, 16) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<16x16x4x4xf32>)
// CHECK:             vector.transfer_write %{{.*}} : vector<4x4xf32>, tensor<4x4xf32>
// CHECK:           } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:           %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c16{{.*}} iter_args(%{{.*}} = %[[ACC0]]) -> (tensor<16x16x4x4xf32>)
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<64x16xf32>
// CHECK:             bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x64xf32>
// Both tiles copied by one thread loop, 16 bytes a thread from each: the
// tiles as [64, 4, 4] and [16, 16, 4], a thread's slice one chunk of 4
// consecutive columns, read as one vector of a row of x and of w.
// CHECK:             %[[AB:.*]]:2 = scf.forall {{.*}} -> (tensor<64x4x4xf32>, tensor<16x16x4xf32>)
// CHECK:               %[[ACHUNK:.*]] = tensor.extract_slice %{{.*}} [1, 1, 4] [64, 1, 1] : tensor<64x4x4xf32> to tensor<1x1x4xf32>
// CHECK:               %[[XV:.*]] = vector.transfer_read %arg0[{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<256x1024xf32>, vector<4xf32>
// CHECK:               vector.transfer_write %[[XV]], %[[ACHUNK]]
// CHECK:               vector.transfer_read %arg1[{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1024x512xf32>, vector<4xf32>
// CHECK-NOT:           tensor.extract %arg
// CHECK:             } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK:             %[[A:.*]] = tensor.collapse_shape %[[AB]]#0 {{\[}}[0], [1, 2]] : tensor<64x4x4xf32> into tensor<64x16xf32>
// CHECK:             %[[B:.*]] = tensor.collapse_shape %[[AB]]#1 {{\[}}[0], [1, 2]] : tensor<16x16x4xf32> into tensor<16x64xf32>
// CHECK:             scf.forall {{.*}} -> (tensor<16x16x4x4xf32>)
// CHECK:               vector.transfer_read %[[A]]{{.*}} : tensor<64x16xf32>, vector<4x16xf32>
// CHECK:               vector.transfer_read %[[B]]{{.*}} : tensor<16x64xf32>, vector<16x4xf32>
// CHECK:               vector.contract {{.*}} : vector<4x16xf32>, vector<16x4xf32> into vector<4x4xf32>
// CHECK:           scf.forall {{.*}} -> (tensor<64x64xf32>)
// CHECK:             vector.transfer_read %[[ACC]]
// CHECK:             vector.transfer_read %arg2{{.*}} : tensor<512xf32>, vector<4xf32>
// CHECK:             arith.addf %{{.*}} : vector<4x4xf32>
// CHECK:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// At most 128 threads: 32 x 64 tiles, 8 x 16 threads.
// T128-LABEL:  func.func @linear
// T128:          scf.forall (%{{.*}}, %{{.*}}) in (8, 8) shared_outs
// T128:            scf.forall (%{{.*}}, %{{.*}}) in (8, 16) {{.*}} -> (tensor<8x16x4x4xf32>)
// T128:              tensor<32x16xf32>
// T128:              tensor<16x64xf32>
// A grid of 64 x 64 tiles (32 blocks) short of the multiprocessors: the
// tiles' halves, M's first. With 33, 32 x 64 tiles (64 blocks); with the
// default 108, 32 x 32 tiles (128 blocks) of 8 x 8 threads.
// HALF-LABEL:  func.func @linear
// HALF:          scf.forall (%{{.*}}, %{{.*}}) in (8, 8) shared_outs
// HALF:            scf.forall (%{{.*}}, %{{.*}}) in (8, 16) {{.*}} -> (tensor<8x16x4x4xf32>)
// HALF:              tensor<32x16xf32>
// HALF:              tensor<16x64xf32>
// SMALL-LABEL: func.func @linear
// SMALL:         scf.forall (%{{.*}}, %{{.*}}) in (8, 16) shared_outs
// SMALL:           scf.forall (%{{.*}}, %{{.*}}) in (8, 8) {{.*}} -> (tensor<8x8x4x4xf32>)
// SMALL:             tensor<32x16xf32>
// SMALL:             tensor<16x32xf32>
// SMALL:           scf.forall {{.*}} -> (tensor<32x32xf32>)
// With 8 multiprocessors the grid of 128 x 128 tiles (2 x 4) gives each a
// block: 16 x 16 threads of 8 x 8 (with 32, 64 x 64 tiles as above). Thread x's 8 columns of B are 2 groups of 4, group h of every
// thread in the B tile's h-th half: chunk c of a B row (4 columns) is
// column group c % 16 * 2 + c / 16 of B, and thread x reads [16, 2, 4] at
// column x * 4 of the halves. The finish reads the bias and writes each
// 8-float row of the thread's tile in two 16-byte pieces.
// LARGE-DAG:   #[[GROUP:.*]] = affine_map<(d0) -> (((d0 mod 64) floordiv 4) * 8 + (d0 floordiv 64) * 4 + d0 mod 4)>
// LARGE-LABEL: func.func @linear
// LARGE:         scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs
// LARGE:           scf.forall (%{{.*}}, %{{.*}}) in (16, 16) {{.*}} -> (tensor<16x16x8x8xf32>)
// LARGE:           scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c16
// LARGE:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<128x16xf32>
// LARGE:             alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x128xf32>
// LARGE:             scf.forall {{.*}} -> (tensor<128x4x4xf32>, tensor<16x32x4xf32>)
// LARGE:               %[[COL:.*]] = affine.apply #[[GROUP]](%{{.*}})
// LARGE:               %[[AT:.*]] = arith.addi %{{.*}}, %[[COL]]
// LARGE:               vector.transfer_read %arg1[%{{.*}}, %[[AT]]]{{.*}} : tensor<1024x512xf32>, vector<4xf32>
// LARGE:             tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [16, 2, 64] : tensor<16x128xf32> into tensor<16x2x64xf32>
// LARGE:             %[[X4:.*]] = arith.muli %{{.*}}, %c4
// LARGE:             tensor.extract_slice %{{.*}}[0, 0, %[[X4]]] [16, 2, 4] [1, 1, 1] : tensor<16x2x64xf32> to tensor<16x2x4xf32>
// LARGE:             vector.shape_cast %{{.*}} : vector<16x2x4xf32> to vector<16x8xf32>
// LARGE:             vector.contract {{.*}} : vector<8x16xf32>, vector<16x8xf32> into vector<8x8xf32>
// LARGE:           scf.forall {{.*}} -> (tensor<128x128xf32>)
// LARGE-COUNT-2:     vector.transfer_read %arg2{{.*}} : tensor<512xf32>, vector<4xf32>
// LARGE-COUNT-16:    vector.transfer_write {{.*}} : vector<1x4xf32>, tensor<8x8xf32>
// LARGE-NOT:         vector<8xf32>
// LARGE:         } {mapping = [#gpu.block<y>, #gpu.block<x>]}
// At most 32 threads: too few to stage; the tiles read through the caches.
// T32-LABEL:   func.func @linear
// T32-NOT:       workgroup
// T32:           scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (256, 512)
func.func @linear(%x: tensor<256x1024xf32>, %w: tensor<1024x512xf32>, %b: tensor<512xf32>) -> tensor<256x512xf32> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<256x1024xf32>, tensor<1024x512xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}

// -----

// A leading dim (the grid's z), 32 x 32 tiles, K in steps of 8; bf16
// widened to f32 as it is staged, the result narrowed as it is written.
// Chunks of 4 (8 bytes): 8 bf16 would leave the tiles' 64 threads more
// rows a pass than the tiles have.
// CHECK-LABEL: func.func @batched_bf16
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 3, 1) shared_outs
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c40{{.*}} step %c8
// CHECK:             scf.forall {{.*}} -> (tensor<32x2x4xf32>, tensor<8x8x4xf32>)
// CHECK:               vector.transfer_read %arg0{{.*}} : tensor<3x96x40xbf16>, vector<4xbf16>
// CHECK:               arith.extf %{{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK:             vector.contract {{.*}} : vector<4x8xf32>, vector<8x4xf32> into vector<4x4xf32>
// CHECK:           arith.truncf %{{.*}} : vector<4x4xf32> to vector<4x4xbf16>
// CHECK:         } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @batched_bf16(%x: tensor<3x96x40xbf16>, %w: tensor<40x32xbf16>, %b: tensor<32xbf16>) -> tensor<3x96x32xbf16> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<3x96x40xbf16>, tensor<40x32xbf16>, tensor<32xbf16>) -> tensor<3x96x32xbf16>
  return %y : tensor<3x96x32xbf16>
}

// -----

// f16 in chunks of 8 (16 bytes of f16, 32 of the f32 tile): each chunk is
// read at once and written as two 16-byte pieces, thread t starting at
// its piece (t / 4) mod 2 (the other piece next), so that the 8 threads
// one wavefront serves write 8 different 16-byte groups of banks; the
// pieces are selected as f16 and widened each.
// CHECK-LABEL: func.func @linear_f16
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c16
// CHECK:           scf.forall (%[[Y:.*]], %[[X:.*]]) in (8, 8) {{.*}} -> (tensor<32x2x8xf32>, tensor<16x4x8xf32>)
// CHECK:             %[[YT:.*]] = arith.muli %[[Y]], %c8
// CHECK:             %[[T:.*]] = arith.addi %[[YT]], %[[X]]
// CHECK:             %[[MINE:.*]] = tensor.extract_slice %{{.*}} [1, 1, 8] [32, 1, 1] : tensor<32x2x8xf32> to tensor<1x1x8xf32>
// CHECK:             %[[V:.*]] = vector.transfer_read %arg0{{.*}} : tensor<64x64xf16>, vector<8xf16>
// CHECK-DAG:         %[[LO:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [4], strides = [1]} : vector<8xf16> to vector<4xf16>
// CHECK-DAG:         %[[HI:.*]] = vector.extract_strided_slice %[[V]] {offsets = [4], sizes = [4], strides = [1]} : vector<8xf16> to vector<4xf16>
// CHECK:             %[[QUAD:.*]] = arith.divui %[[T]], %c4
// CHECK:             %[[FIRST:.*]] = arith.remui %[[QUAD]], %c2
// CHECK:             %[[IS1:.*]] = arith.cmpi eq, %[[FIRST]], %c1
// CHECK:             %[[P0:.*]] = arith.select %[[IS1]], %[[HI]], %[[LO]] : vector<4xf16>
// CHECK:             %[[W0:.*]] = arith.extf %[[P0]] : vector<4xf16> to vector<4xf32>
// CHECK:             %[[AT0:.*]] = arith.muli %[[FIRST]], %c4
// CHECK:             %[[NEXT:.*]] = arith.addi %[[FIRST]], %c1
// CHECK:             %[[SECOND:.*]] = arith.remui %[[NEXT]], %c2
// CHECK:             %[[IS1B:.*]] = arith.cmpi eq, %[[SECOND]], %c1
// CHECK:             %[[P1:.*]] = arith.select %[[IS1B]], %[[HI]], %[[LO]] : vector<4xf16>
// CHECK:             %[[W1:.*]] = arith.extf %[[P1]] : vector<4xf16> to vector<4xf32>
// CHECK:             %[[AT1:.*]] = arith.muli %[[SECOND]], %c4
// CHECK:             %[[WR:.*]] = vector.transfer_write %[[W0]], %[[MINE]][%{{.*}}, %{{.*}}, %[[AT0]]] {in_bounds = [true]} : vector<4xf32>, tensor<1x1x8xf32>
// CHECK:             vector.transfer_write %[[W1]], %[[WR]][%{{.*}}, %{{.*}}, %[[AT1]]] {in_bounds = [true]} : vector<4xf32>, tensor<1x1x8xf32>
// CHECK-NOT:         vector<8xf32>
// CHECK:             vector.transfer_read %arg1{{.*}} : tensor<64x64xf16>, vector<8xf16>
// CHECK:           } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
func.func @linear_f16(%x: tensor<64x64xf16>, %w: tensor<64x64xf16>, %b: tensor<64xf16>) -> tensor<64x64xf16> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<64x64xf16>, tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
