// fuel-gpu-emulated-kernels: NVVM kernels compiled for the host, calling
// the GPU emulator for what only a GPU has.
// RUN: fuel-opt --split-input-file --verify-diagnostics --fuel-gpu-emulated-kernels %s | FileCheck %s

// The kernel, its workgroup buffer and the libdevice declaration move into
// the host module under the module's prefix (the declaration keeps its
// name); the special registers, the barrier and the shuffle become calls;
// workgroup pointers become plain ones. The module becomes a gpu.binary
// that names it, each kernel gets an entry over the launch's parameters,
// and a constructor registers the entries and the workgroup buffers.
// CHECK:       llvm.func @__nv_expf(f32) -> f32
// CHECK-NEXT:  llvm.mlir.global internal @__fuel_emu.k.__wg() {addr_space = 0 : i32} : !llvm.array<64 x f32>
// CHECK-LABEL: llvm.func @__fuel_emu.k.kern(%{{.*}}: !llvm.ptr, %{{.*}}: i32)
// CHECK-NOT:     nvvm.
// CHECK:         %[[TID:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_sreg(%[[TID]]) : (i32) -> i32
// CHECK-NEXT:    %[[BID:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_sreg(%[[BID]]) : (i32) -> i32
// CHECK:         %[[WG:.*]] = llvm.mlir.addressof @__fuel_emu.k.__wg : !llvm.ptr
// CHECK-NOT:     llvm.addrspacecast
// CHECK:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK:         llvm.call @fuel_emu_barrier() : () -> ()
// CHECK:         %[[BITS:.*]] = llvm.bitcast %{{.*}} : f32 to i32
// CHECK:         %[[KIND:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         %[[SHFL:.*]] = llvm.call @fuel_emu_shfl(%[[KIND]], %{{.*}}, %[[BITS]], %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32) -> i64
// CHECK:         %[[LOW:.*]] = llvm.trunc %[[SHFL]] : i64 to i32
// CHECK:         %[[F:.*]] = llvm.bitcast %[[LOW]] : i32 to f32
// CHECK:         %[[HIGH:.*]] = llvm.lshr %[[SHFL]]
// CHECK:         %[[VALID:.*]] = llvm.trunc %[[HIGH]] : i64 to i1
// CHECK:         %[[S0:.*]] = llvm.insertvalue %[[F]], %{{.*}}[0] : !llvm.struct<(f32, i1)>
// CHECK:         llvm.insertvalue %[[VALID]], %[[S0]][1] : !llvm.struct<(f32, i1)>
// CHECK:         llvm.call @__nv_expf
// CHECK:       gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "fuel-gpu-emulator:k\00">]
// CHECK-NOT:   gpu.module
// CHECK:       llvm.func internal @__fuel_emu.k.kern.params(%[[PARAMS:.*]]: !llvm.ptr)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[PARAMS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[PARAMS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> i32
// CHECK:         llvm.call @__fuel_emu.k.kern(%[[V0]], %[[V1]])
// CHECK:       llvm.func internal @__fuel_emu.register()
// CHECK:         llvm.call @fuel_emu_register_kernel
// CHECK:         llvm.mlir.addressof @__fuel_emu.k.__wg
// CHECK:         llvm.mlir.constant(256 : i64)
// CHECK:         llvm.call @fuel_emu_register_shared
// CHECK:       llvm.mlir.global_ctors ctors = [@__fuel_emu.register], priorities = [0 : i32]
module attributes {gpu.container_module} {
  llvm.func @__nv_expf(f32) -> f32
  gpu.module @k [#nvvm.target<chip = "sm_90">] {
    llvm.mlir.global internal @__wg() {addr_space = 3 : i32} : !llvm.array<64 x f32>
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @kern(%out: !llvm.ptr, %n: i32) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %b = nvvm.read.ptx.sreg.ctaid.y : i32
      %wg = llvm.mlir.addressof @__wg : !llvm.ptr<3>
      %g = llvm.addrspacecast %wg : !llvm.ptr<3> to !llvm.ptr
      %at = llvm.getelementptr %g[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %x = llvm.sitofp %b : i32 to f32
      llvm.store %x, %at : f32, !llvm.ptr
      nvvm.barrier0
      %v = llvm.load %at : !llvm.ptr -> f32
      %mask = llvm.mlir.constant(-1 : i32) : i32
      %one = llvm.mlir.constant(1 : i32) : i32
      %clamp = llvm.mlir.constant(31 : i32) : i32
      %s = nvvm.shfl.sync bfly %mask, %v, %one, %clamp {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
      %r = llvm.extractvalue %s[0] : !llvm.struct<(f32, i1)>
      %e = llvm.call @__nv_expf(%r) : (f32) -> f32
      %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %e, %o : f32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// Only NVVM kernels are emulated.
module attributes {gpu.container_module} {
  // expected-error @+1 {{fuel-gpu-emulated-kernels: the GPU module needs one NVVM target (nvvm-attach-target)}}
  gpu.module @k [#rocdl.target<chip = "gfx942">] {
    llvm.func @kern() attributes {gpu.kernel} {
      llvm.return
    }
  }
}

// -----

// An NVVM operation with no emulation is named.
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90">] {
    llvm.func @kern() attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @+1 {{fuel-gpu-emulated-kernels: nvvm.read.ptx.sreg.clock has no emulation on the CPU}}
      %c = nvvm.read.ptx.sreg.clock : i32
      llvm.return
    }
  }
}

// -----

// The kernels must be lowered to the LLVM dialect first.
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90">] {
    // expected-error @+1 {{fuel-gpu-emulated-kernels: the GPU module is not lowered to LLVM functions and globals}}
    gpu.func @kern() kernel {
      gpu.return
    }
  }
}
