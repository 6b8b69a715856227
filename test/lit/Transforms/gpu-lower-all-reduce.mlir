// fuel-gpu-lower-all-reduce: gpu.all_reduce and clustered scalar
// gpu.subgroup_reduce lowered in the kernel, and the kernel's known launch
// sizes in place of gpu.block_dim and gpu.grid_dim.
// RUN: fuel-opt --split-input-file --pass-pipeline="builtin.module(gpu.module(fuel-gpu-lower-all-reduce))" %s | FileCheck %s

// A known block of 256 threads: the reduction's shuffles and its pass
// through workgroup memory, with the block size 256 folded in; no launch
// size is read.
// CHECK-LABEL: gpu.func @sum
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.block_dim
// CHECK:         gpu.shuffle xor
// CHECK:         gpu.barrier
// CHECK-NOT:     gpu.block_dim
// CHECK-NOT:     gpu.grid_dim
// CHECK:         gpu.return
gpu.module @known {
  gpu.func @sum(%out: memref<64xf32>) workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 64, 1, 1>} {
    %t = gpu.thread_id x
    %b = gpu.block_id x
    %g = gpu.grid_dim x
    %x = arith.index_cast %t : index to i32
    %f = arith.sitofp %x : i32 to f32
    %s = gpu.all_reduce add %f uniform {} : (f32) -> f32
    %i = arith.remui %b, %g : index
    memref.store %s, %out[%i] : memref<64xf32>
    gpu.return
  }
}

// -----

// Unknown sizes stay reads of the launch's dimensions.
// CHECK-LABEL: gpu.func @unknown
// CHECK-NOT:     gpu.all_reduce
// CHECK-DAG:     gpu.block_dim x
// CHECK-DAG:     gpu.grid_dim x
gpu.module @unknown {
  gpu.func @unknown(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %g = gpu.grid_dim x
    %x = arith.index_cast %t : index to i32
    %f = arith.sitofp %x : i32 to f32
    %s = gpu.all_reduce add %f uniform {} : (f32) -> f32
    memref.store %s, %out[%g] : memref<64xf32>
    gpu.return
  }
}

// -----

// A clustered subgroup reduction (clusters of 8 lanes): butterfly shuffles
// within the cluster (offsets 1, 2, 4, over 32 lanes), each lane adding
// what it reads; no workgroup memory, no barrier. One without a cluster
// size (the whole subgroup, whose size differs between NVIDIA's warps and
// AMD's waves of 64) is left for the conversion to reject.
// CHECK-LABEL: gpu.func @clustered
// CHECK-NOT:     gpu.subgroup_reduce
// CHECK:         %[[X1:.*]], %{{.*}} = gpu.shuffle xor %[[V:.*]], %c1_i32, %c32_i32 : f32
// CHECK:         %[[S1:.*]] = arith.addf %[[V]], %[[X1]] : f32
// CHECK:         %[[X2:.*]], %{{.*}} = gpu.shuffle xor %[[S1]], %c2_i32, %c32_i32 : f32
// CHECK:         %[[S2:.*]] = arith.addf %[[S1]], %[[X2]] : f32
// CHECK:         %[[X4:.*]], %{{.*}} = gpu.shuffle xor %[[S2]], %c4_i32, %c32_i32 : f32
// CHECK:         %[[S4:.*]] = arith.addf %[[S2]], %[[X4]] : f32
// CHECK-NOT:     gpu.shuffle
// CHECK-NOT:     gpu.barrier
// CHECK:         memref.store %[[S4]]
// CHECK-LABEL: gpu.func @whole_subgroup
// CHECK:         gpu.subgroup_reduce add
gpu.module @subgroups {
  gpu.func @clustered(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %x = arith.index_cast %t : index to i32
    %f = arith.sitofp %x : i32 to f32
    %s = gpu.subgroup_reduce add %f uniform cluster(size = 8) : (f32) -> f32
    memref.store %s, %out[%t] : memref<64xf32>
    gpu.return
  }
  gpu.func @whole_subgroup(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %x = arith.index_cast %t : index to i32
    %f = arith.sitofp %x : i32 to f32
    %s = gpu.subgroup_reduce add %f uniform : (f32) -> f32
    memref.store %s, %out[%t] : memref<64xf32>
    gpu.return
  }
}
