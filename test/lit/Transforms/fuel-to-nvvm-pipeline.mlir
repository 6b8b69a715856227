// fuel-to-nvvm: GPU kernels in PTX, launched by host code through the GPU
// runtime.
// RUN: fuel-opt --fuel-to-nvvm="chip=sm_90 toolkit=%cuda_toolkit" %s | FileCheck %s
// RUN: fuel-opt --fuel-to-nvvm="codegen=false toolkit=%cuda_toolkit" %s | FileCheck %s --check-prefix=PLAIN
// RUN: not fuel-opt --fuel-to-nvvm="chip=sm_80 features=+ptx60" %s 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not fuel-opt --fuel-to-nvvm="chip=gfx942" %s 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not fuel-opt --fuel-to-nvvm="format=elf" %s 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: fuel-opt --fuel-to-nvvm="chip=sm_90 format=emulator" %s | FileCheck %s --check-prefix=EMU
// RUN: fuel-opt --fuel-to-nvvm="chip=sm_90 format=emulator-profile" %s | FileCheck %s --check-prefix=PROFILE
// RUN: not fuel-opt --fuel-to-nvvm="max-threads=100" %s 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not fuel-opt --fuel-to-nvvm="opt-level=4" %s 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not fuel-opt --fuel-to-nvvm="compute-units=-1" %s 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: not fuel-opt --fuel-to-nvvm="own-rows-bytes=65536" %s 2>&1 | FileCheck %s --check-prefix=OWN
// RUN: fuel-opt --fuel-to-nvvm --dump-pass-pipeline %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: fuel-opt --fuel-to-nvvm="own-rows-bytes=0" --dump-pass-pipeline %s -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DUMP0
// RUN: fuel-opt --fuel-to-nvvm="chip=sm_90 toolkit=%cuda_toolkit" %s | FileCheck %s --check-prefix=SHORT
// RUN: fuel-opt --fuel-to-nvvm="chip=sm_90 short-pointers=false toolkit=%cuda_toolkit" %s \
// RUN:   | FileCheck %s --check-prefix=LONG
// The kernels serialized with 32-bit addresses of shared memory (one
// register each), unless short-pointers=false.
// SHORT: ld.shared.b32 \09%r{{[0-9]+}}, [%r{{[0-9]+}}]
// SHORT-NOT: .shared.b32 \09[%rd
// LONG: ld.shared.b32 \09%r{{[0-9]+}}, [%rd{{[0-9]+}}]
// OWN: fuel-to-nvvm: own-rows-bytes must be from 0 to 49152, got 65536
// The staged attention's own rows in shared memory, up to 32 KiB a block.
// DUMP: fuel-codegen-gpu{{.*}} own-rows-bytes=32768
// DUMP: fuel-gpu-module-to-binary{format=isa short-pointers=true
// DUMP0: fuel-codegen-gpu{{.*}} own-rows-bytes=0
// PTX: fuel-to-nvvm: sm_80 needs PTX 7.0 at least (features=+ptx70), got '+ptx60'
// CHIP: fuel-to-nvvm: chip must be an NVIDIA architecture (sm_80, sm_90, ...), got 'gfx942'
// FORMAT: fuel-to-nvvm: format must be isa, bin, fatbin, llvm, offload, emulator or emulator-profile, got 'elf'
// For the GPU emulator (no toolkit needed): the kernels on the host, each
// module a name, its launch the one a GPU gets.
// EMU-NOT:   gpu.module
// EMU:       gpu.launch_func <%{{.*}} : !llvm.ptr> @softmax_kernel::@softmax_kernel
// EMU:       llvm.func @__fuel_emu.softmax_kernel.softmax_kernel(
// EMU-NOT:     fuel_emu_access
// EMU:       llvm.call @fuel_emu_shfl
// EMU-NOT:   fuel_emu_access
// EMU:       gpu.binary @softmax_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, bin = "fuel-gpu-emulator:softmax_kernel\00">]
// EMU-NOT:   gpu.module
// EMU:       llvm.mlir.global_ctors ctors = [@__fuel_emu.register]

// With the memory-access profile: the kernel's loads and stores call it,
// and the constructor registers their table.
// PROFILE:     llvm.func {{.*}}@__fuel_emu.softmax_kernel.softmax_kernel(
// PROFILE:       llvm.call @fuel_emu_access
// PROFILE:     llvm.call @fuel_emu_register_sites
// THREADS: fuel-to-nvvm: max-threads must be a power of two from 32 to 1024, got 100
// OPT: fuel-to-nvvm: opt-level must be from 0 to 3, got 4
// UNITS: fuel-to-nvvm: compute-units must be 0 (from the chip) or more, got -1

// The softmax is one kernel: a block per row (64 blocks of 256 threads),
// each row's max and sum combined across the block with warp shuffles and
// shared memory. The host launches it through the runtime.
// CHECK:       llvm.func @softmax
// CHECK:         llvm.call @mgpuStreamCreate
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @softmax_kernel::@softmax_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:   gpu.launch_func
// CHECK:       gpu.binary @softmax_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME:    .target sm_90
// CHECK-SAME:    .entry softmax_kernel(
// CHECK-SAME:    shfl.sync.bfly.b32
// CHECK-SAME:    bar.sync
// CHECK-NOT:   malloc
// Without the schedules: a kernel per loop nest, the row reductions one
// thread per row.
// PLAIN-COUNT-6: gpu.launch_func
// PLAIN-NOT:     shfl.sync
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %y = fuel.fused softmax_last_dim (%x) : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}
