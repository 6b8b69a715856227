// fuel-gpu-expand-math: the math ops that convert-gpu-to-rocdl would lower
// to OCML calls become arithmetic, other math ops and LLVM intrinsic calls.
// RUN: fuel-opt --pass-pipeline='builtin.module(gpu.module(fuel-gpu-expand-math))' %s | FileCheck %s
// RUN: fuel-opt --pass-pipeline='builtin.module(gpu.module(fuel-gpu-expand-math,convert-gpu-to-rocdl{chipset=gfx942}))' %s | FileCheck %s --check-prefix=ROCDL
// RUN: fuel-opt --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-rocdl{chipset=gfx942}))' %s | FileCheck %s --check-prefix=WITHOUT

// CHECK-LABEL: gpu.func @kernel
// erf, erfc and cbrt: polynomial approximations (no math op of theirs left).
// CHECK-NOT: math.erf
// CHECK-NOT: math.cbrt
// f16 math in f32.
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// asinh and powf: expansions into log, sqrt and exp.
// CHECK-NOT: math.asinh
// CHECK-NOT: math.powf
// floor, sin and log10: the LLVM intrinsics, on scalars and vectors.
// CHECK: llvm.call_intrinsic "llvm.floor"(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK: llvm.call_intrinsic "llvm.sin"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.log10"(%{{.*}}) : (f32) -> f32
// f32 exp stays: the conversion lowers it to the intrinsic, which the
// backend lowers to instructions; f32 tanh, which it lowers to an intrinsic
// the backend makes a libcall of, is approximated.
// CHECK: math.exp %{{.*}} : f32
// CHECK-NOT: math.tanh

// Converted to ROCDL, the kernel calls no OCML function (without the pass
// it calls ten; f32 exp is not among them).
// ROCDL: llvm.func @kernel
// ROCDL-NOT: __ocml_
// WITHOUT-COUNT-10: llvm.func @__ocml_
gpu.module @kernels {
  gpu.func @kernel(%x: f32, %h: f16, %v: vector<4xf32>, %out: memref<12xf32>, %hout: memref<1xf16>, %vout: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %0 = math.erf %x : f32
    memref.store %0, %out[%c0] : memref<12xf32>
    %1 = math.erfc %x : f32
    memref.store %1, %out[%c1] : memref<12xf32>
    %2 = math.cbrt %x : f32
    memref.store %2, %out[%c2] : memref<12xf32>
    %3 = math.exp %h : f16
    memref.store %3, %hout[%c0] : memref<1xf16>
    %4 = math.asinh %x : f32
    memref.store %4, %out[%c3] : memref<12xf32>
    %5 = math.powf %x, %x : f32
    memref.store %5, %out[%c4] : memref<12xf32>
    %6 = math.floor %v : vector<4xf32>
    vector.store %6, %vout[%c0] : memref<4xf32>, vector<4xf32>
    %7 = math.sin %x : f32
    memref.store %7, %out[%c5] : memref<12xf32>
    %8 = math.log10 %x : f32
    memref.store %8, %out[%c6] : memref<12xf32>
    %9 = math.exp %x : f32
    memref.store %9, %out[%c7] : memref<12xf32>
    %10 = math.tanh %x : f32
    memref.store %10, %out[%c8] : memref<12xf32>
    gpu.return
  }
}
