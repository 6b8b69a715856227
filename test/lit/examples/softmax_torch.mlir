// The README's first command: a torch-mlir export of softmax is fused into
// one op, and decomposing it again gives the recipe's normal form.
// RUN: fuel-opt %fuel_src/examples/softmax.torch-mlir.mlir --fuel-fuse | FileCheck %s --check-prefix=FUSED
// RUN: fuel-opt %fuel_src/examples/softmax.torch-mlir.mlir --fuel-fuse --fuel-decompose | FileCheck %s --check-prefix=MAIN

// FUSED-LABEL: func @softmax
// FUSED-SAME: (%[[X:.+]]: tensor<2x16x64xf32>)
// FUSED-NEXT: %[[Y:.+]] = fuel.fused softmax_last_dim (%[[X]]) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// FUSED-NEXT: return %[[Y]]

// MAIN-LABEL: func @softmax
// MAIN-NOT: fuel.fused
// MAIN: arith.maximumf
// MAIN: math.exp
// MAIN: arith.divf
