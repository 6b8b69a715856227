// The README's example: it parses, verifies, CSE keeps one of the two equal
// RoPEs, and canonicalization converges on it.
// RUN: fuel-opt %fuel_src/examples/attention_block.mlir --cse | FileCheck %s
// RUN: fuel-opt %fuel_src/examples/attention_block.mlir -canonicalize="test-convergence" -o /dev/null

// CHECK-LABEL: func @attention_block
// CHECK-COUNT-2: fuel.fused rope
// CHECK-NOT: fuel.fused rope
// CHECK: fuel.fused flash_attn
// CHECK: fuel.fused fused_linear
