// fuel-to-rocdl: GPU kernels for AMD GPUs as device LLVM IR (a gpu.binary
// per kernel module, for llc-22 and ld.lld-22), launched by host code
// through the GPU runtime.
// RUN: fuel-opt --fuel-to-rocdl="chip=gfx90a" %s | FileCheck %s
// RUN: not fuel-opt --fuel-to-rocdl="chip=sm_90" %s 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not fuel-opt --fuel-to-rocdl="max-threads=2048" %s 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not fuel-opt --fuel-to-rocdl="compute-units=-8" %s 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: not fuel-opt --fuel-to-rocdl="own-rows-bytes=-1" %s 2>&1 | FileCheck %s --check-prefix=OWN
// RUN: fuel-opt --fuel-to-rocdl --dump-pass-pipeline %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: fuel-opt --fuel-to-rocdl="own-rows-bytes=32768" --dump-pass-pipeline %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DUMP32
// OWN: fuel-to-rocdl: own-rows-bytes must be from 0 to 49152, got -1
// The staged attention's own rows stay in global memory unless asked for.
// DUMP: fuel-codegen-gpu{{.*}} own-rows-bytes=0
// DUMP32: fuel-codegen-gpu{{.*}} own-rows-bytes=32768
// RUN: not fuel-opt --fuel-to-rocdl="format=isa" %s 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: fuel-opt --fuel-to-rocdl="format=emulator" %s | FileCheck %s --check-prefix=EMU
// RUN: fuel-opt --fuel-to-rocdl="format=emulator-profile" %s | FileCheck %s --check-prefix=PROFILE
// CHIP: fuel-to-rocdl: chip must be an AMD GPU architecture (gfx90a, gfx942, ...), got 'sm_90'
// THREADS: fuel-to-rocdl: max-threads must be a power of two from 32 to 1024, got 2048
// UNITS: fuel-to-rocdl: compute-units must be 0 (from the chip) or more, got -8
// FORMAT: fuel-to-rocdl: format must be llvm, emulator or emulator-profile, got 'isa'
// For the GPU emulator: the kernel on the host, its module a name.
// EMU:       llvm.func @__fuel_emu.softmax_kernel.softmax_kernel(
// EMU-NOT:     fuel_emu_access
// EMU:         llvm.call @fuel_emu_bpermute
// EMU-NOT:   fuel_emu_access
// EMU:       gpu.binary @softmax_kernel  [#gpu.object<#rocdl.target<O = 3, chip = "gfx942">, bin = "fuel-gpu-emulator:softmax_kernel\00">]
// EMU:       llvm.mlir.global_ctors ctors = [@__fuel_emu.register]

// With the memory-access profile: the kernel's loads and stores call it,
// and the constructor registers their table.
// PROFILE:     llvm.func {{.*}}@__fuel_emu.softmax_kernel.softmax_kernel(
// PROFILE:       llvm.call @fuel_emu_access
// PROFILE:     llvm.call @fuel_emu_register_sites

// CHECK:       gpu.launch_func <%{{.*}} : !llvm.ptr> @softmax_kernel::@softmax_kernel
// CHECK-NOT:   gpu.launch_func
// CHECK:       gpu.binary @softmax_kernel  [#gpu.object<#rocdl.target<O = 3, chip = "gfx90a">, offload = "
// CHECK-SAME:    target triple = \22amdgcn-amd-amdhsa\22
// The block's partials in LDS (address space 3); the kernel in amdgpu_kernel.
// CHECK-SAME:    addrspace(3) global [{{[0-9]+}} x float]
// CHECK-SAME:    define amdgpu_kernel void @softmax_kernel(
// CHECK-SAME:    llvm.amdgcn.ds.bpermute
// CHECK-NOT:   malloc
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}
