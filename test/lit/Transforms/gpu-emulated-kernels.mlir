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

// An AMD kernel: the work-item and workgroup ids, the lane count (mbcnt),
// the wave's lane exchanges (ds_bpermute, ds_swizzle) and the barrier
// become calls; private (5) and workgroup (3) pointers become plain ones;
// the kernel registers with waves of 64 lanes (32 with wave64 off).
// CHECK-LABEL: llvm.func @__fuel_emu.a.kern(
// CHECK-NOT:     rocdl.
// CHECK:         llvm.call @fuel_emu_sreg(%{{.*}}) : (i32) -> i32
// CHECK:         llvm.call @fuel_emu_sreg(%{{.*}}) : (i32) -> i32
// CHECK:         %[[ALL:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:    %[[BASE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[HI:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[LO:.*]] = llvm.call @fuel_emu_mbcnt(%[[HI]], %[[ALL]], %[[BASE]]) : (i32, i32, i32) -> i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_mbcnt(%[[ONE]], %[[ALL]], %[[LO]])
// CHECK:         llvm.alloca %{{.*}} x f32 : (i32) -> !llvm.ptr
// CHECK:         llvm.call @fuel_emu_bpermute(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK:         llvm.call @fuel_emu_swizzle(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK:         llvm.call @fuel_emu_barrier()
// CHECK:       gpu.binary @a [#gpu.object<#rocdl.target<chip = "gfx942">, bin = "fuel-gpu-emulator:a\00">]
// CHECK:       llvm.func internal @__fuel_emu.register()
// CHECK:         %[[WAVE:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_register_kernel(%{{.*}}, %{{.*}}, %{{.*}}, %[[WAVE]])
// CHECK:         %[[WAVE32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_register_kernel(%{{.*}}, %{{.*}}, %{{.*}}, %[[WAVE32]])
module attributes {gpu.container_module} {
  gpu.module @a [#rocdl.target<chip = "gfx942">] {
    llvm.func @kern(%out: !llvm.ptr) attributes {gpu.kernel, rocdl.kernel, rocdl.flat_work_group_size = "1,64"} {
      %t = rocdl.workitem.id.x : i32
      %b = rocdl.workgroup.id.y : i32
      %all = llvm.mlir.constant(-1 : i32) : i32
      %zero = llvm.mlir.constant(0 : i32) : i32
      %lo = rocdl.mbcnt.lo %all, %zero : (i32, i32) -> i32
      %lane = rocdl.mbcnt.hi %all, %lo : (i32, i32) -> i32
      %one = llvm.mlir.constant(1 : i32) : i32
      %p = llvm.alloca %one x f32 : (i32) -> !llvm.ptr<5>
      %x = llvm.sitofp %b : i32 to f32
      llvm.store %x, %p : f32, !llvm.ptr<5>
      %four = llvm.mlir.constant(4 : i32) : i32
      %addr = llvm.mul %lane, %four : i32
      %y = rocdl.ds_bpermute %addr, %t : (i32, i32) -> i32
      %pattern = llvm.mlir.constant(1055 : i32) : i32
      %z = rocdl.ds_swizzle %y, %pattern : (i32, i32) -> i32
      rocdl.barrier
      %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      llvm.store %z, %o : i32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @b [#rocdl.target<chip = "gfx1100", flags = {no_wave64}>] {
    llvm.func @kern() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

// -----

// Only NVVM and ROCDL kernels are emulated.
module attributes {gpu.container_module} {
  // expected-error @+1 {{fuel-gpu-emulated-kernels: the GPU module needs one NVVM or ROCDL target (nvvm-attach-target, rocdl-attach-target)}}
  gpu.module @k [#nvvm.target<chip = "sm_90">, #rocdl.target<chip = "gfx942">] {
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

// -----

// A declaration the host module has with another type.
module attributes {gpu.container_module} {
  llvm.func @__nv_expf(f64) -> f64
  gpu.module @k [#nvvm.target<chip = "sm_90">] {
    // expected-error @+1 {{fuel-gpu-emulated-kernels: declared differently in the host module}}
    llvm.func @__nv_expf(f32) -> f32
  }
}
