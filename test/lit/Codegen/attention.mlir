// The attention schedule: flash_attn as FlashAttention-2 computes it. Query
// blocks of 64 rows in an scf.forall over (batch, head, block), key blocks
// of 64 in an scf.for that carries the running max, sum and accumulator;
// the block contractions in 8x32 register tiles with reduction steps of 16,
// the softmax steps one row of the block at a time in vectors. No tensor is
// [Sq, Sk]: a 16384-token causal attention holds blocks of 64x64 scores.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="vector-width=32 report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE
// AVX2's registers: 4x16 register tiles.
// RUN: fuel-opt --split-input-file \
// RUN:   --fuel-codegen-cpu="vector-registers=16 vector-register-bits=256" %s \
// RUN:   | FileCheck %s --check-prefix=AVX2
// AVX2-LABEL: func.func @causal_long
// AVX2:         vector.contract {{.*}} vector<4x16xf32>, vector<16x16xf32> into vector<4x16xf32>
// AVX2:         math.exp
// AVX2:         vector.contract {{.*}} vector<4x16xf32>, vector<16x16xf32> into vector<4x16xf32>

// CHECK-LABEL: func.func @causal_long
// CHECK-NOT:     16384x16384
// The keys transposed once, into key blocks of k^T ([B, H, Sk / 64, D, 64]:
// a block's rows 64 apart).
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 8, 256, 64, 64]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x8x256x64x64xf32>) outs(%{{.*}} : tensor<1x8x256x64x64xf32>)
// CHECK:         scf.forall (%{{.*}}, %[[H:.*]], %[[QB:.*]]) in (1, 8, 256)
// Causal: the query block starting at i0 visits the key blocks up to
// ceil((i0 + 64) / 64).
// CHECK:           arith.ceildivsi
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64{{(_[0-9]+)?}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// s = q @ k^T in register tiles.
// CHECK:             vector.contract {{.*}} vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// The mask by position, the row max, exp.
// CHECK:             arith.cmpi sle, {{.*}} : vector<1x64xindex>
// CHECK:             vector.multi_reduction <maximumf>, {{.*}} : vector<1x64xf32> to vector<1xf32>
// CHECK:             math.exp {{.*}} : vector<1x64xf32>
// CHECK:             vector.multi_reduction <add>, {{.*}} : vector<1x64xf32> to vector<1xf32>
// acc = alpha * acc + p @ v, the scaling in the register tile.
// CHECK:             arith.mulf {{.*}} : vector<8x32xf32>
// CHECK:             vector.contract {{.*}} vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// o = acc / l, 0 where no key was visible.
// CHECK:           arith.divf {{.*}} : vector<1x64xf32>
// CHECK:         scf.forall.in_parallel
// CHECK-NEXT:      tensor.parallel_insert_slice {{.*}} [1, 1, 64, 64] [1, 1, 1, 1] : tensor<64x64xf32> into tensor<1x8x16384x64xf32>
// CHECK-NOT:     fuel.fused
func.func @causal_long(%q: tensor<1x8x16384x64xf32>, %k: tensor<1x8x16384x64xf32>, %v: tensor<1x8x16384x64xf32>) -> tensor<1x8x16384x64xf32> {
  %o = fuel.fused flash_attn {causal = true, softmax_scale = 0.125 : f32} (%q, %k, %v) : (tensor<1x8x16384x64xf32>, tensor<1x8x16384x64xf32>, tensor<1x8x16384x64xf32>) -> tensor<1x8x16384x64xf32>
  return %o : tensor<1x8x16384x64xf32>
}

// -----

// Grouped-query heads read kv head h / 4; not causal: every key block (one
// here), no mask; f16 widened to f32 once, the result narrowed once.
// CHECK-LABEL: func.func @gqa_f16
// CHECK:         scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in (2, 8, 2)
// CHECK:           %[[KV:.*]] = arith.divui %[[H]], %c4
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c64{{(_[0-9]+)?}} step %c64{{(_[0-9]+)?}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>)
// CHECK:           arith.truncf {{.*}} to vector<1x16xf16>
func.func @gqa_f16(%q: tensor<2x8x128x32xf16>, %k: tensor<2x2x64x32xf16>, %v: tensor<2x2x64x16xf16>) -> tensor<2x8x128x16xf16> {
  %o = fuel.fused flash_attn {softmax_scale = 0.2 : f32} (%q, %k, %v) : (tensor<2x8x128x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x16xf16>) -> tensor<2x8x128x16xf16>
  return %o : tensor<2x8x128x16xf16>
}

// -----

// ALiBi: the slope of the block's head read once per query block; k_len:
// the key loop ends at the last live block, keys past k_len are masked,
// and the causal diagonal is aligned to k_len.
// CHECK-LABEL: func.func @alibi_k_len
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in (2, 2, 1)
// CHECK:           %[[OFF:.*]] = arith.subi %{{.*}}, %c16
// CHECK:           tensor.extract %{{.*}}[%[[B]], %[[H]]] : tensor<2x2xf32>
// CHECK:           arith.ceildivsi
// CHECK:           scf.for
// CHECK:             math.absf {{.*}} : vector<1x32xf32>
// CHECK:             arith.cmpi slt, {{.*}} : vector<32xindex>
// CHECK:             arith.cmpi sle, {{.*}} : vector<1x32xindex>
func.func @alibi_k_len(%q: tensor<2x2x16x16xf32>, %k: tensor<2x2x32x16xf32>, %v: tensor<2x2x32x16xf32>, %s: tensor<2x2xf32>, %n: index) -> tensor<2x2x16x16xf32> {
  %o = fuel.fused flash_attn {causal = true, softmax_scale = 0.25 : f32} (%q, %k, %v, %s, %n) : (tensor<2x2x16x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2xf32>, index) -> tensor<2x2x16x16xf32>
  return %o : tensor<2x2x16x16xf32>
}

// -----

// Shapes off the blocks: q, k and v padded with zeros to whole blocks
// (8 queries, 16 keys) and head dims of 16; keys past Sk masked; the padded
// queries and value columns dropped from the result.
// CHECK-LABEL: func.func @ragged
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 2, 3, 8] [1, 1, 1, 1] : tensor<1x2x3x8xf32> into tensor<1x2x8x16xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 2, 5, 6] [1, 1, 1, 1] : tensor<1x2x5x6xf32> into tensor<1x2x16x16xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 2, 5, 8] [1, 1, 1, 1] : tensor<1x2x5x8xf32> into tensor<1x2x16x16xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 2, 1, 16, 16]
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 1)
// CHECK:             arith.cmpi slt, %{{.*}}, %{{.*}} : vector<16xindex>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 3, 6] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x2x3x6xf32>
func.func @ragged(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x6xf32>) -> tensor<1x2x3x6xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.25 : f32} (%q, %k, %v) : (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32>) -> tensor<1x2x3x6xf32>
  return %o : tensor<1x2x3x6xf32>
}

// -----

// Dynamic sequence lengths: blocks of 64, the lengths padded to whole blocks
// at run time (ceil(S / 64) * 64), the query blocks of the scf.forall and
// the key loop's bound computed from them; padded keys masked (keys from Sk
// on), padded queries dropped from the result, whose length is q's.
// CHECK-LABEL: func.func @dynamic_lengths
// CHECK-DAG:     %[[SQ:.*]] = tensor.dim %{{.*}}, %c2{{.*}} : tensor<1x2x?x64xf32>
// CHECK-DAG:     %[[SQB:.*]] = arith.ceildivui %[[SQ]], %c64{{.*}} : index
// CHECK-DAG:     %[[SQP:.*]] = arith.muli %[[SQB]], %c64{{.*}} : index
// CHECK:         tensor.empty(%[[SQP]]) : tensor<1x2x?x64xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 2, %{{.*}}, 64] [1, 1, 1, 1] : tensor<1x2x?x64xf32> into tensor<1x2x?x64xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 2, %{{.*}}, 64, 64] : tensor<1x2x?x64xf32> into tensor<1x2x?x64x64xf32>
// CHECK:         %[[BLOCKS:.*]] = arith.divui %[[SQP]], %c64{{.*}} : index
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, %[[BLOCKS]])
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64{{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK-NOT:     tensor<1x2x?x?xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, %[[SQ]], 64] [1, 1, 1, 1] : tensor<1x2x?x64xf32> to tensor<1x2x?x64xf32>
// CHECK-NOT:     fuel.fused
func.func @dynamic_lengths(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = true} (%q, %k, %v) : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

// -----

// A dynamic head dim is left to the decomposition.
// CHECK-LABEL: func.func @dynamic_head_dim
// CHECK:         fuel.fused flash_attn
// REPORT: not scheduled: the attention schedule needs static batch, heads and head dims (the sequence lengths may be dynamic)
func.func @dynamic_head_dim(%q: tensor<1x2x16x?xf32>, %k: tensor<1x2x16x?xf32>, %v: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
  %o = fuel.fused flash_attn {softmax_scale = 0.125 : f32, causal = false} (%q, %k, %v) : (tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  return %o : tensor<1x2x16x16xf32>
}

// -----

// What the schedule leaves to the decomposition, with the reason.
// CHECK-LABEL: func.func @unscheduled
// CHECK: fuel.fused flash_attn
// REPORT: not scheduled: the attention schedule handles f32, f16 and bf16
// REPORT: not scheduled: the attention schedule handles f32, f16 and bf16
// REPORT: not scheduled: the attention schedule needs non-empty sequences and head dims
func.func @unscheduled_f64(%q: tensor<1x2x16x16xf64>) -> (tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>) {
  %a = fuel.fused flash_attn {softmax_scale = 0.25 : f32} (%q, %q, %q) : (tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>) -> tensor<1x2x16x16xf64>
  %b = fuel.fused flash_attn_backward_q {softmax_scale = 0.25 : f32} (%q, %q, %q, %q) : (tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>) -> tensor<1x2x16x16xf64>
  return %a, %b : tensor<1x2x16x16xf64>, tensor<1x2x16x16xf64>
}
func.func @unscheduled(%q: tensor<1x2x0x16xf32>, %k: tensor<1x2x16x16xf32>, %v: tensor<1x2x16x16xf32>) -> tensor<1x2x0x16xf32> {
  %c = fuel.fused flash_attn {softmax_scale = 0.25 : f32} (%q, %k, %v) : (tensor<1x2x0x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) -> tensor<1x2x0x16xf32>
  return %c : tensor<1x2x0x16xf32>
}

// -----

// The backwards. dq: per query block, a first pass over the key blocks
// (running max, sum, and sum of p * dp: lse and D per row), then a second
// computing ds = p * (dp - D) * scale and dq += ds k.
// CHECK-LABEL: func.func @backward_q
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 2)
// CHECK:           scf.for {{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK:           math.log
// CHECK:           scf.for {{.*}} -> (tensor<64x32xf32>)
// CHECK:             vector.contract
// CHECK-NOT:     fuel.fused
func.func @backward_q(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>, %v: tensor<1x2x128x32xf32>, %do: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %g = fuel.fused flash_attn_backward_q {causal = true, softmax_scale = 0.2 : f32} (%q, %k, %v, %do) : (tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32>
  return %g : tensor<1x2x128x32xf32>
}

// -----

// dk (dv alike): lse and D of every query row into [B, Hq, Sq] first; then
// per key block of each kv head, over the query heads of its group and the
// query blocks that see it (causal: from the block's diagonal on),
// dk += ds^T q.
// CHECK-LABEL: func.func @backward_k
// CHECK:         %[[STATS:.*]]:2 = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 2) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x4x128xf32>, tensor<1x4x128xf32>)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 2)
// CHECK:           arith.floordivsi
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (tensor<64x32xf32>)
// CHECK:             scf.for {{.*}} -> (tensor<64x32xf32>)
// CHECK:               vector.transfer_read %[[STATS]]#0
// CHECK:               vector.transfer_read %[[STATS]]#1
func.func @backward_k(%q: tensor<1x4x128x32xf32>, %k: tensor<1x2x128x32xf32>, %v: tensor<1x2x128x32xf32>, %do: tensor<1x4x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %g = fuel.fused flash_attn_backward_k {causal = true, softmax_scale = 0.2 : f32} (%q, %k, %v, %do) : (tensor<1x4x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x4x128x32xf32>) -> tensor<1x2x128x32xf32>
  return %g : tensor<1x2x128x32xf32>
}

// -----

// The backwards with dynamic lengths: blocks of 64 over the lengths padded
// at run time (ceil(S / 64) blocks), the result cut back to Sq (dq) or Sk
// (dk).
// CHECK-LABEL: func.func @backward_dynamic
// CHECK-DAG:     %[[SQ:.*]] = tensor.dim %arg0, %{{.*}} : tensor<1x2x?x32xf32>
// CHECK-DAG:     %[[SK:.*]] = tensor.dim %arg1, %{{.*}} : tensor<1x1x?x32xf32>
// CHECK:         %[[DQ:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, %{{.*}}) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x2x?x32xf32>)
// CHECK:         tensor.extract_slice %[[DQ]][0, 0, 0, 0] [1, 2, %[[SQ]], 32] [1, 1, 1, 1]
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, %{{.*}}) shared_outs({{.*}}) -> (tensor<1x2x?xf32>, tensor<1x2x?xf32>)
// CHECK:         %[[DK:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, %{{.*}}) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x1x?x32xf32>)
// CHECK:         tensor.extract_slice %[[DK]][0, 0, 0, 0] [1, 1, %{{.*}}, 32] [1, 1, 1, 1]
// CHECK-NOT:     fuel.fused
func.func @backward_dynamic(%q: tensor<1x2x?x32xf32>, %k: tensor<1x1x?x32xf32>, %v: tensor<1x1x?x32xf32>, %do: tensor<1x2x?x32xf32>) -> (tensor<1x2x?x32xf32>, tensor<1x1x?x32xf32>) {
  %dq = fuel.fused flash_attn_backward_q {causal = true, softmax_scale = 0.2 : f32} (%q, %k, %v, %do) : (tensor<1x2x?x32xf32>, tensor<1x1x?x32xf32>, tensor<1x1x?x32xf32>, tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32>
  %dk = fuel.fused flash_attn_backward_k {causal = true, softmax_scale = 0.2 : f32} (%q, %k, %v, %do) : (tensor<1x2x?x32xf32>, tensor<1x1x?x32xf32>, tensor<1x1x?x32xf32>, tensor<1x2x?x32xf32>) -> tensor<1x1x?x32xf32>
  return %dq, %dk : tensor<1x2x?x32xf32>, tensor<1x1x?x32xf32>
}

// -----

// A dynamic head dim in a backward is left to the decomposition too.
// CHECK-LABEL: func.func @backward_dynamic_head_dim
// CHECK:         fuel.fused flash_attn_backward_v
// REPORT: flash_attn_backward_v not scheduled: the attention schedule needs static batch, heads and head dims (the sequence lengths may be dynamic)
func.func @backward_dynamic_head_dim(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x16x16xf32>, %v: tensor<1x2x16x?xf32>, %do: tensor<1x2x16x?xf32>) -> tensor<1x2x16x?xf32> {
  %dv = fuel.fused flash_attn_backward_v {softmax_scale = 0.2 : f32} (%q, %k, %v, %do) : (tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>) -> tensor<1x2x16x?xf32>
  return %dv : tensor<1x2x16x?xf32>
}

// -----

// Key blocks of 16 (Sk = 16) are scheduled with 16-lane vectors and left to
// the decomposition with 32.
// CHECK-LABEL: func.func @narrow_keys
// CHECK-COUNT-2: scf.forall
// WIDE: not scheduled: the attention schedule needs key blocks (16) that are a multiple of the vector width (32)
// WIDE: not scheduled: the attention schedule needs key blocks (16) that are a multiple of the vector width (32)
func.func @narrow_keys(%q: tensor<1x1x16x16xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  %a = fuel.fused flash_attn {softmax_scale = 0.25 : f32} (%q, %q, %q) : (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32>
  %b = fuel.fused flash_attn_backward_v {softmax_scale = 0.25 : f32} (%q, %q, %q, %q) : (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32>
  return %a, %b : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
}
