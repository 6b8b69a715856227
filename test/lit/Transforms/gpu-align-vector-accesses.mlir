// fuel-gpu-align-vector-accesses: a kernel's short contiguous vector
// transfers of its buffers become vector.load / vector.store with the
// alignment their element offset is known to give (buffers start at 16
// bytes); anything it cannot tell stays a transfer (element-aligned).
// Scalar loads and stores get their element's size.
// RUN: fuel-opt --split-input-file --pass-pipeline="builtin.module(gpu.module(fuel-gpu-align-vector-accesses))" %s | FileCheck %s

// A row-wise thread's chunks: offset row * 4096 + t * 4 (a multiple of 4
// f32: 16 bytes), and the rows of the tile 1024 apart.
// CHECK-LABEL: gpu.func @chunks
// CHECK:         vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4096x4096xf32>, vector<4xf32>
// CHECK:         vector.store %{{.*}} {alignment = 16 : i64} : memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>, vector<4xf32>
// f16: 8 of them are 16 bytes.
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<64x2048xf16>, vector<8xf16>
// A multiple of 2 elements only: 8 bytes.
// CHECK:         vector.load %{{.*}} {alignment = 8 : i64} : memref<4096x4096xf32>, vector<4xf32>
// A store wider than 16 bytes is left as it is.
// CHECK:         vector.transfer_write %{{.*}} : vector<12xf32>, memref<4096x4096xf32>
// CHECK-NOT:     vector.transfer_read
// CHECK:         gpu.return
gpu.module @chunks {
  gpu.func @chunks(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %h: memref<64x2048xf16>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c4096 = arith.constant 4096 : index
    %pad = ub.poison : f32
    %hpad = ub.poison : f16
    %row = gpu.block_id x
    %t = gpu.thread_id x
    %off = arith.muli %row, %c4096 : index
    %col = arith.muli %t, %c4 : index
    %rx = memref.reinterpret_cast %x to offset: [%off], sizes: [1, 4, 1024], strides: [4096, 1024, 1] : memref<4096x4096xf32> to memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>
    %v = vector.transfer_read %rx[%c0, %c1, %col], %pad {in_bounds = [true]} : memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>, vector<4xf32>
    %w = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<4xf32>
    %s = arith.addf %v, %w : vector<4xf32>
    %ry = memref.reinterpret_cast %y to offset: [%off], sizes: [1, 4, 1024], strides: [4096, 1024, 1] : memref<4096x4096xf32> to memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>
    vector.transfer_write %s, %ry[%c0, %c2, %col] {in_bounds = [true]} : vector<4xf32>, memref<1x4x1024xf32, strided<[4096, 1024, 1], offset: ?>>
    %c8 = arith.constant 8 : index
    %hcol8 = arith.muli %t, %c8 : index
    %hv = vector.transfer_read %h[%row, %hcol8], %hpad {in_bounds = [true]} : memref<64x2048xf16>, vector<8xf16>
    %col2 = arith.muli %t, %c2 : index
    %u = vector.transfer_read %x[%row, %col2], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<4xf32>
    %wide = arith.constant dense<1.0> : vector<12xf32>
    vector.transfer_write %wide, %y[%row, %col] {in_bounds = [true]} : vector<12xf32>, memref<4096x4096xf32>
    gpu.return
  }
}

// -----

// Left as they are: an offset of unknown alignment (the thread's index
// itself; a view at an unknown column), a load wider than 16 bytes,
// workgroup memory, an access that may be out of bounds, and a column of a
// row-major buffer (not its innermost dim).
// CHECK-LABEL: gpu.func @unknown
// CHECK-NOT:     vector.load
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
gpu.module @unknown {
  gpu.func @unknown(%x: memref<64x64xf32>, %i: index) workgroup(%w : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %pad = ub.poison : f32
    %t = gpu.thread_id x
    %a = vector.transfer_read %x[%c0, %t], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
    %b = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<8xf32>
    %c = vector.transfer_read %w[%c0], %pad {in_bounds = [true]} : memref<64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %sub = memref.subview %x[0, %i] [1, 8] [1, 1] : memref<64x64xf32> to memref<8xf32, strided<[1], offset: ?>>
    %d = vector.transfer_read %sub[%c0], %pad {in_bounds = [true]} : memref<8xf32, strided<[1], offset: ?>>, vector<4xf32>
    %e = vector.transfer_read %x[%c0, %c4], %pad : memref<64x64xf32>, vector<4xf32>
    %f = vector.transfer_read %x[%c0, %c4], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<64x64xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// Before the loops are lowered: views of the argument (a subview at an
// unknown row of 64 f32, expanded), affine maps of thread ids, and an
// scf.for's induction variable (from 0 by 16).
// CHECK-LABEL: gpu.func @views_and_loops
// CHECK:         scf.for
// CHECK:           vector.load %{{.*}} {alignment = 16 : i64} : memref<4x16xf32, strided<[16, 1], offset: ?>>, vector<4xf32>
// From 2 by 16: 8 bytes.
// CHECK:           vector.load %{{.*}} {alignment = 8 : i64} : memref<64x64xf32>, vector<4xf32>
// CHECK:           vector.store %{{.*}} {alignment = 16 : i64} : memref<64x64xf32>, vector<4xf32>
gpu.module @views {
  gpu.func @views_and_loops(%x: memref<64x64xf32>, %i: index) kernel {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %pad = ub.poison : f32
    %t = gpu.thread_id x
    %row = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<64x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    %tiles = memref.expand_shape %row [[0, 1]] output_shape [4, 16] : memref<64xf32, strided<[1], offset: ?>> into memref<4x16xf32, strided<[16, 1], offset: ?>>
    scf.for %k = %c0 to %c64 step %c16 {
      %col = affine.apply affine_map<(d0)[s0] -> (d0 mod 4 * 4)>(%t)[%k]
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%t)
      %a = vector.transfer_read %tiles[%r, %col], %pad {in_bounds = [true]} : memref<4x16xf32, strided<[16, 1], offset: ?>>, vector<4xf32>
      %k2 = arith.addi %k, %c2 : index
      %b = vector.transfer_read %x[%t, %k2], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
      %s = arith.addf %a, %b : vector<4xf32>
      vector.transfer_write %s, %x[%t, %k] {in_bounds = [true]} : vector<4xf32>, memref<64x64xf32>
    }
    gpu.return
  }
}

// -----

// Outside a kernel, nothing is known of a function's arguments.
// CHECK-LABEL: gpu.func @device_function
// CHECK:         vector.transfer_read
// CHECK-NOT:     vector.load
gpu.module @device {
  gpu.func @device_function(%x: memref<64x64xf32>) {
    %c0 = arith.constant 0 : index
    %pad = ub.poison : f32
    %a = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// A shift right keeps the zeros beyond it: (t * 8) >> 1 is a multiple of 4
// (4 bytes of i8: nf4's codes of a chunk of 8 k), (t * 2) >> 1 of nothing
// known, and (t * 8) >> 3 neither.
// CHECK-LABEL: gpu.func @shifts
// CHECK:         vector.load %{{.*}} {alignment = 4 : i64} : memref<64x64xi8>, vector<4xi8>
// CHECK:         vector.transfer_read
// CHECK:         vector.transfer_read
// CHECK-NOT:     vector.load
gpu.module @shifts {
  gpu.func @shifts(%x: memref<64x64xi8>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %pad = ub.poison : i8
    %t = gpu.thread_id x
    %k = arith.muli %t, %c8 : index
    %half = arith.shrui %k, %c1 : index
    %a = vector.transfer_read %x[%c0, %half], %pad {in_bounds = [true]} : memref<64x64xi8>, vector<4xi8>
    %k2 = arith.muli %t, %c2 : index
    %h2 = arith.shrui %k2, %c1 : index
    %b = vector.transfer_read %x[%c0, %h2], %pad {in_bounds = [true]} : memref<64x64xi8>, vector<4xi8>
    %h3 = arith.shrui %k, %c3 : index
    %c = vector.transfer_read %x[%c0, %h3], %pad {in_bounds = [true]} : memref<64x64xi8>, vector<4xi8>
    gpu.return
  }
}

// -----

// The lesser, the greater, or a select of two multiples of 4 is one (a
// lane's piece of a row clamped to the row's last, as the split-keys
// attention reads them); with a multiple of 2 among them, only of 2. A
// multiple of 8 floor-divided by 2 is one of 4, and a multiple of 4 modulo
// 16 too; modulo 6 (not a power of two), nothing is known.
// CHECK-LABEL: gpu.func @clamps
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 8 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:         vector.transfer_read
// CHECK-NOT:     vector.load
gpu.module @clamps {
  gpu.func @clamps(%x: memref<4x128xf32>, %c: i1) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c6 = arith.constant 6 : index
    %c124 = arith.constant 124 : index
    %pad = ub.poison : f32
    %t = gpu.thread_id x
    %col = arith.muli %t, %c4 : index
    %lo = arith.minui %col, %c124 : index
    %a = vector.transfer_read %x[%c0, %lo], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %hi = arith.maxsi %col, %c4 : index
    %b = vector.transfer_read %x[%c0, %hi], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %either = arith.select %c, %col, %c124 : index
    %d = vector.transfer_read %x[%c0, %either], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %two = arith.minsi %col, %c6 : index
    %e = vector.transfer_read %x[%c0, %two], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %col8 = arith.muli %t, %c8 : index
    %half = arith.divui %col8, %c2 : index
    %f = vector.transfer_read %x[%c0, %half], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %rem = arith.remui %col, %c16 : index
    %g = vector.transfer_read %x[%c0, %rem], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    %rem6 = arith.remui %col, %c6 : index
    %h = vector.transfer_read %x[%c0, %rem6], %pad {in_bounds = [true]} : memref<4x128xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// Scalar loads and stores get their element's size as alignment (the
// default data layout's for an i64 would be 4: two 32-bit accesses); one
// that has an alignment keeps it, and an i1 none.
// CHECK-LABEL: gpu.func @scalars
// CHECK:         memref.load %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<64xi64>
// CHECK:         memref.load %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<64xf32>
// CHECK:         memref.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<64xf32>
// CHECK:         memref.load %{{.*}}[%{{.*}}] : memref<64xi1>
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<64xf64, #gpu.address_space<workgroup>>
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 2 : i64} : memref<64xbf16>
gpu.module @scalars {
  gpu.func @scalars(%l: memref<64xi64>, %x: memref<64xf32>, %p: memref<64xi1>, %h: memref<64xbf16>) workgroup(%w: memref<64xf64, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %label = memref.load %l[%t] : memref<64xi64>
    %v = memref.load %x[%t] : memref<64xf32>
    %a = memref.load %x[%t] {alignment = 16 : i64} : memref<64xf32>
    %b = memref.load %p[%t] : memref<64xi1>
    %d = arith.sitofp %label : i64 to f64
    memref.store %d, %w[%t] : memref<64xf64, #gpu.address_space<workgroup>>
    %e = arith.truncf %v : f32 to bf16
    memref.store %e, %h[%t] : memref<64xbf16>
    gpu.return
  }
}
