// fuel-gpu-emulated-kernels{memory-profile}: each load and store of a
// kernel, but those of its private memory, first calls the emulator's
// memory-access profile with its site, address, size and alignment (the
// widest piece a GPU moves it in); a constructor
// registers the module's table of sites. The accesses counted are those
// LLVM's optimizer leaves at the target's opt level: at O0 (module @k) all
// of them, at the default O2 (module @m) a repeated load is one.
// RUN: fuel-opt --fuel-gpu-emulated-kernels=memory-profile %s | FileCheck %s
// RUN: fuel-opt --fuel-gpu-emulated-kernels %s | FileCheck %s --check-prefix=PLAIN

// The table: one line a site (function, load or store, type, alignment,
// location).
// CHECK-DAG:   llvm.mlir.global internal constant @__fuel_emu.sites.1.table("twice\09load\09f32\094\09loc({{.*}}:{{[0-9]+}}:12)\0Atwice\09store\09f32\094\09loc({{.*}}:{{[0-9]+}}:7)\0A\00")
// CHECK-DAG:   llvm.mlir.global internal constant @__fuel_emu.sites.0.table("kern\09store\09f32\094\09loc({{.*}}:{{[0-9]+}}:7)\0Akern\09load\09vector<4xf32>\098\09loc({{.*}}:{{[0-9]+}}:12)\0Akern\09store\09vector<4xf32>\0916\09loc({{.*}}:{{[0-9]+}}:7)\0A\00")
// CHECK-DAG:   llvm.mlir.global internal constant @__fuel_emu.sites.0.module("k\00")
// CHECK-LABEL: llvm.func @__fuel_emu.k.kern(
// CHECK:         llvm.call @fuel_emu_sreg
// CHECK:         %[[SITE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[BYTES0:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT:    %[[ALIGN0:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_access(%[[SITE0]], %[[AT:.*]], %[[BYTES0]], %[[ALIGN0]]) : (i32, !llvm.ptr, i32, i32) -> ()
// CHECK-NEXT:    llvm.store %{{.*}}, %[[AT]] {{.*}}: f32, !llvm.ptr
// CHECK:         %[[SITE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[BYTES1:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[ALIGN1:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT:    llvm.call @fuel_emu_access(%[[SITE1]], %[[IN:.*]], %[[BYTES1]], %[[ALIGN1]])
// CHECK-NEXT:    llvm.load %[[IN]] {{.*}}: !llvm.ptr -> vector<4xf32>
// The private (alloca) store and load are not counted.
// CHECK-NOT:     fuel_emu_access
// CHECK:         llvm.store %{{.*}}, %[[PRIV:.*]] {{.*}}: vector<4xf32>, !llvm.ptr
// CHECK-NEXT:    llvm.load %[[PRIV]]
// CHECK:         %[[SITE2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         llvm.call @fuel_emu_access(%[[SITE2]]
// CHECK-NEXT:    llvm.store
// CHECK-LABEL: llvm.func {{.*}}@__fuel_emu.m.twice(
// CHECK:         llvm.call @fuel_emu_access
// CHECK-NEXT:    llvm.load
// CHECK-NOT:     llvm.load
// CHECK:         llvm.call @fuel_emu_access
// CHECK-NEXT:    llvm.store
// CHECK:       llvm.func @fuel_emu_access(i32, !llvm.ptr, i32, i32)
// CHECK:       llvm.func internal @__fuel_emu.register()
// CHECK:         %[[MOD:.*]] = llvm.mlir.addressof @__fuel_emu.sites.0.module
// CHECK:         %[[TABLE:.*]] = llvm.mlir.addressof @__fuel_emu.sites.0.table
// CHECK:         llvm.call @fuel_emu_register_sites(%[[MOD]], %[[TABLE]])

// PLAIN-NOT: fuel_emu_access
// PLAIN-NOT: fuel_emu_register_sites
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<O = 0, chip = "sm_90">] {
    llvm.mlir.global internal @__wg() {addr_space = 3 : i32} : !llvm.array<64 x f32>
    llvm.func @kern(%out: !llvm.ptr, %in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %wg = llvm.mlir.addressof @__wg : !llvm.ptr<3>
      %at = llvm.getelementptr %wg[%t] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      %x = llvm.sitofp %t : i32 to f32
      llvm.store %x, %at : f32, !llvm.ptr<3>
      %i = llvm.getelementptr %in[%t] : (!llvm.ptr, i32) -> !llvm.ptr, vector<4xf32>
      %v = llvm.load %i {alignment = 8 : i64} : !llvm.ptr -> vector<4xf32>
      %one = llvm.mlir.constant(1 : i32) : i32
      %priv = llvm.alloca %one x vector<4xf32> : (i32) -> !llvm.ptr
      llvm.store %v, %priv : vector<4xf32>, !llvm.ptr
      %w = llvm.load %priv : !llvm.ptr -> vector<4xf32>
      %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, vector<4xf32>
      llvm.store %w, %o : vector<4xf32>, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @m [#nvvm.target<chip = "sm_90">] {
    llvm.func @twice(%out: !llvm.ptr, %in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %i = llvm.getelementptr %in[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %a = llvm.load %i : !llvm.ptr -> f32
      %b = llvm.load %i : !llvm.ptr -> f32
      %s = llvm.fadd %a, %b : f32
      %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %s, %o : f32, !llvm.ptr
      llvm.return
    }
  }
}
