// nf4_matmul's code book lookups (Codegen/quantized.mlir) reach the backends
// as one shuffle per 16 or 32 codes: vpshufb with AVX2, tbl with NEON. None
// is a byte extracted and inserted at a time, which is what LLVM makes of
// them when InstCombine splits a looked-up vector; the schedule freezes the
// codes and the looked-up vectors to keep them whole.
// RUN: fuel-opt --pass-pipeline="builtin.module(fuel-to-llvm{vector-registers=16 vector-register-bits=256})" %s \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O2 -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell \
// RUN:   | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell \
// RUN:   | FileCheck %s --check-prefix=AVX2 --implicit-check-not=vpextrb --implicit-check-not=vpinsrb
// RUN: fuel-opt --pass-pipeline="builtin.module(fuel-to-llvm{vector-registers=32 vector-register-bits=128})" %s \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O2 -mtriple=aarch64-unknown-linux-gnu \
// RUN:   | llc -O2 -mtriple=aarch64-unknown-linux-gnu \
// RUN:   | FileCheck %s --check-prefix=NEON --implicit-check-not=umov

// One row of A by 8 rows of W: per row of W and step of 32 weights, the 16
// bytes twice as 32 codes, four lookups, four interleaves of bytes and four
// of pairs.
// AVX2-LABEL: nf4:
// AVX2:         vpsrlvd
// AVX2-COUNT-4: vpshufb
// AVX2:         vpunpcklbw
// AVX2:         vpunpckhwd
// AVX2:         vfmadd231ps
// With 128-bit vectors, two vectors of 16 codes: eight lookups.
// NEON-LABEL: nf4:
// NEON-COUNT-8: tbl
// NEON:         zip1
// NEON:         fmla
func.func @nf4(%a: tensor<1x128xf32>, %w: tensor<8x64xi8>, %s: tensor<8x2xf32>) -> tensor<1x8xf32> {
  %c = fuel.fused nf4_matmul (%a, %w, %s) : (tensor<1x128xf32>, tensor<8x64xi8>, tensor<8x2xf32>) -> tensor<1x8xf32>
  return %c : tensor<1x8xf32>
}
