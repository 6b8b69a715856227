// fuel-gpu-lower-vectors: a kernel's vector ops lowered to those the GPU
// conversions convert (contractions as outer products, n-D from_elements
// unrolled), with no diagnostic for its vector reads of workgroup memory;
// convert-gpu-to-nvvm and convert-gpu-to-rocdl then convert them.
// RUN: fuel-opt --pass-pipeline="builtin.module(gpu.module(fuel-gpu-lower-vectors))" %s 2>&1 | FileCheck %s
// RUN: fuel-opt --pass-pipeline="builtin.module(gpu.module(fuel-gpu-lower-vectors,convert-gpu-to-nvvm,reconcile-unrealized-casts))" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NVVM
// RUN: fuel-opt --pass-pipeline="builtin.module(gpu.module(fuel-gpu-lower-vectors,convert-gpu-to-rocdl{chipset=gfx90a},reconcile-unrealized-casts))" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ROCDL
// The gap: convert-vector-to-llvm reports each vector access to workgroup
// memory as an error (and leaves it; the pass does not fail).
// RUN: fuel-opt --pass-pipeline="builtin.module(gpu.module(convert-vector-to-llvm))" %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GAP
// GAP: error: conversion of memref memory space #gpu.address_space<workgroup> to integer address space failed

// CHECK-NOT:   error
// CHECK-LABEL: gpu.func @accumulate
// CHECK-NOT:     vector.contract
// CHECK-NOT:     vector.transfer_read
// CHECK-COUNT-2: vector.load %{{.*}} : memref<2x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: vector.fma {{.*}} : vector<4xf32>
// CHECK-COUNT-2: vector.store {{.*}} : memref<2x4xf32>, vector<4xf32>
// NVVM-NOT:    error
// NVVM-LABEL:  llvm.func @accumulate
// NVVM:          llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xf32>
// NVVM:          llvm.intr.fmuladd
// NVVM-NOT:      vector.
// NVVM-NOT:      unrealized_conversion_cast
// ROCDL-NOT:   error
// ROCDL-LABEL: llvm.func @accumulate
// ROCDL:         llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xf32>
// ROCDL-NOT:     vector.
// ROCDL-NOT:     unrealized_conversion_cast
gpu.module @kernels {
  gpu.func @accumulate(%out: memref<2x4xf32>, %a: f32, %b: f32) workgroup(%tile: memref<2x4xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %r0 = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true]} : memref<2x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %r1 = vector.transfer_read %tile[%c1, %c0], %zero {in_bounds = [true]} : memref<2x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %lhs = vector.from_elements %a, %b, %b, %a : vector<2x2xf32>
    %rhs0 = vector.broadcast %r0 : vector<4xf32> to vector<2x4xf32>
    %rhs = vector.insert %r1, %rhs0 [1] : vector<4xf32> into vector<2x4xf32>
    %acc = arith.constant dense<1.0> : vector<2x4xf32>
    %d = vector.contract {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %lhs, %rhs, %acc : vector<2x2xf32>, vector<2x4xf32> into vector<2x4xf32>
    %d0 = vector.extract %d[0] : vector<4xf32> from vector<2x4xf32>
    %d1 = vector.extract %d[1] : vector<4xf32> from vector<2x4xf32>
    vector.transfer_write %d0, %out[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<2x4xf32>
    vector.transfer_write %d1, %out[%c1, %c0] {in_bounds = [true]} : vector<4xf32>, memref<2x4xf32>
    gpu.return
  }
}
