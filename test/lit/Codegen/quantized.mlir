// The quantized schedule: qmatmul with GGML's blocks of 32 (Q8_0, Q8_1, Q4_0,
// Q4_1, Q5_0, Q5_1) and super-blocks of 256 (Q2_K to Q6_K). A copied once
// into the order the weights decode in (f32); tiles of rows of A by rows of
// W in an scf.forall; the reduction in steps of two blocks (64 weights).
// Each block's quants are read as whole u32 words, the first block's shifted
// 16 bits into place from two neighbouring words, and taken out of their
// words in 32-bit lanes by shifts; one accumulator of the target's f32
// lanes per (row of A, row of W), reduced once at the end.
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu %s | FileCheck %s
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="vector-registers=16 vector-register-bits=256" %s \
// RUN:   | FileCheck %s --check-prefix=AVX2
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="vector-registers=32 vector-register-bits=128" %s \
// RUN:   | FileCheck %s --check-prefix=NARROW
// RUN: fuel-opt --split-input-file --fuel-codegen-cpu="report=true" %s \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// AVX-512's registers: 16 lanes, tiles of 8 rows of A by 2 of W (16
// accumulators); A's K split into [pair, block, word, byte] and transposed
// to [pair, byte, block, word].
// CHECK-LABEL: func.func @q8_0
// CHECK:         tensor.expand_shape %{{.*}} output_shape [8, 2, 2, 8, 4] : tensor<8x128xf32> into tensor<8x2x2x8x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8x2x2x8x4xf32>) outs(%{{.*}} : tensor<8x2x4x2x8xf32>)
// CHECK:         %[[A:.*]] = tensor.collapse_shape %{{.*}} : tensor<8x2x4x2x8xf32> into tensor<8x128xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 4)
// CHECK:           scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:             vector.transfer_read %[[A]]{{.*}} : tensor<8x128xf32>, vector<16xf32>
// The first block's scale: the low half of word 0; its quants from words 1-8
// and 0-7; the second's scale: the high half of word 8; its quants words
// 9-16.
// CHECK:             %[[D0:.*]] = vector.transfer_read %{{.*}} : tensor<272xi32>, vector<1xi32>
// CHECK:             vector.extract %[[D0]][0] : i32 from vector<1xi32>
// CHECK:             arith.bitcast %{{.*}} : i16 to f16
// CHECK:             %[[HI:.*]] = vector.transfer_read %{{.*}} : tensor<272xi32>, vector<8xi32>
// CHECK:             %[[UP:.*]] = arith.shli %[[HI]], %{{.*}} : vector<8xi32>
// CHECK:             %[[LO:.*]] = vector.transfer_read %{{.*}} : tensor<272xi32>, vector<8xi32>
// CHECK:             %[[DOWN:.*]] = arith.shrui %[[LO]], %{{.*}} : vector<8xi32>
// CHECK:             %[[FIRST:.*]] = arith.ori %[[DOWN]], %[[UP]] : vector<8xi32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<272xi32>, vector<1xi32>
// CHECK:             arith.shrui %{{.*}}, %c16_i32 : i32
// CHECK:             %[[SECOND:.*]] = vector.transfer_read %{{.*}} : tensor<272xi32>, vector<8xi32>
// CHECK:             %[[Q:.*]] = vector.shuffle %[[FIRST]], %[[SECOND]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// Lanes 0-7 scaled by the first block's d, 8-15 by the second's.
// CHECK:             vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// Byte 0 of each word: up by 24, arithmetically down by 24.
// CHECK:             %[[B0:.*]] = arith.shli %[[Q]], %{{.*}} : vector<16xi32>
// CHECK:             arith.shrsi %[[B0]], %{{.*}} : vector<16xi32>
// CHECK:             arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// Byte 3: down by 24 only.
// CHECK:             arith.shrsi %[[Q]], %{{.*}} : vector<16xi32>
// CHECK:             vector.fma
// CHECK:           vector.reduction <add>
// CHECK:         scf.forall.in_parallel
// CHECK-NOT:     fuel.fused

// AVX2's: 8 lanes, tiles of 8 rows of A by 1 of W; a block per vector of
// words.
// AVX2-LABEL: func.func @q8_0
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 8)
// AVX2:           scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2:             %[[Q:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// AVX2:             %[[W0:.*]] = vector.shuffle %[[Q]], %[[Q]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>, vector<16xi32>
// AVX2:             arith.shli %[[W0]], %{{.*}} : vector<8xi32>
// AVX2:             %[[W1:.*]] = vector.shuffle %[[Q]], %[[Q]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi32>, vector<16xi32>
// AVX2:             arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
func.func @q8_0(%a: tensor<8x128xf32>, %w: tensor<272xi32>) -> tensor<8x8xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 128 : i64, n = 8 : i64} (%a, %w) : (tensor<8x128xf32>, tensor<272xi32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// Q4_0, one row of A (decode), batch dims folded; A's K split into [pair,
// block, high nibble, word, byte] and transposed to [pair, byte, high
// nibble, block, word], extended to f32. The nibbles by a shift per lane and
// a mask, made floats less 8 exactly (2^23's exponent or'd in, then 2^23 +
// 8 subtracted); with one row of A each block's products are summed before
// its scale multiplies them.
// CHECK-LABEL: func.func @q4_0
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x1x64xf16> into tensor<1x64xf16>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x2x2x4x4xf16>) outs(%{{.*}} : tensor<1x1x4x2x2x4xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:             vector.transfer_read %{{.*}} : tensor<1x64xf32>, vector<16xf32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<36xi32>, vector<4xi32>
// Both blocks' words twice: lanes 0-7 take nibbles 0, 2, 4, 6; 8-15 1, 3, 5, 7.
// CHECK:             %[[Q:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xi32>, vector<4xi32>
// CHECK:             %[[TWICE:.*]] = vector.shuffle %[[Q]], %[[Q]] [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7] : vector<8xi32>, vector<8xi32>
// CHECK:             arith.shrui %[[TWICE]], %{{.*}} : vector<16xi32>
// CHECK:             arith.andi %{{.*}} : vector<16xi32>
// CHECK:             %[[BIASED:.*]] = arith.ori %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:             %[[F:.*]] = arith.bitcast %[[BIASED]] : vector<16xi32> to vector<16xf32>
// CHECK:             arith.subf %[[F]], %{{.*}} : vector<16xf32>
// CHECK:             arith.mulf %{{.*}} : vector<16xf32>
// CHECK:             vector.fma
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 1, 4] : tensor<1x4xf16> into tensor<1x1x4xf16>

// AVX2-LABEL: func.func @q4_0
// AVX2:             %[[Q:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xi32>, vector<4xi32>
// Nibble 0 needs no shift.
// AVX2-NOT:         arith.shrui
// AVX2:             arith.andi %[[Q]], %{{.*}} : vector<8xi32>
// AVX2:             arith.shrui %[[Q]], %{{.*}} : vector<8xi32>
func.func @q4_0(%a: tensor<1x1x64xf16>, %w: tensor<36xi32>) -> tensor<1x1x4xf16> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 64 : i64, n = 4 : i64} (%a, %w) : (tensor<1x1x64xf16>, tensor<36xi32>) -> tensor<1x1x4xf16>
  return %c : tensor<1x1x4xf16>
}

// -----

// Q5_0 (AVX2's registers, two rows of A, one of W): each lane's fifth bit shifted out
// of its block's u32 of fifth bits (the two blocks' broadcast, blended by
// lane) by the lane's weight, moved to bit 4 and or'ed into the nibble; then
// minus 16.
// AVX2-LABEL: func.func @q5_0
// AVX2:           scf.for
// AVX2:             %[[H0:.*]] = vector.broadcast %{{.*}} : i32 to vector<8xi32>
// AVX2:             %[[H1:.*]] = vector.broadcast %{{.*}} : i32 to vector<8xi32>
// AVX2:             %[[H:.*]] = vector.shuffle %[[H0]], %[[H1]] [0, 1, 2, 3, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// AVX2:             %[[BIT:.*]] = arith.shrui %[[H]], %{{.*}} : vector<8xi32>
// AVX2:             %[[UP:.*]] = arith.shli %[[BIT]], %{{.*}} : vector<8xi32>
// AVX2:             %[[FIFTH:.*]] = arith.andi %[[UP]], %{{.*}} : vector<8xi32>
// AVX2:             %[[Q:.*]] = arith.ori %{{.*}}, %[[FIFTH]] : vector<8xi32>
// AVX2:             %[[BIASED:.*]] = arith.ori %[[Q]], %{{.*}} : vector<8xi32>
// AVX2:             arith.bitcast %[[BIASED]] : vector<8xi32> to vector<8xf32>
// The fifth bits are blended once per step, not once per piece.
// AVX2-NOT:         vector.broadcast %{{.*}} : i32 to vector<8xi32>
// AVX2:             scf.yield
func.func @q5_0(%a: tensor<2x64xf32>, %w: tensor<11xi32>) -> tensor<2x1xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q5_0>, k = 64 : i64, n = 1 : i64} (%a, %w) : (tensor<2x64xf32>, tensor<11xi32>) -> tensor<2x1xf32>
  return %c : tensor<2x1xf32>
}

// -----

// Q4_1, one row of A: w = d * q + m, so each block adds d times its dot
// product and m times the sum of its activations, which is summed once per
// step (for every row of W).
// AVX2-LABEL: func.func @q4_1
// AVX2:           scf.for
// AVX2:             %[[S1:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2-COUNT-6:     arith.addf
// AVX2-COUNT-7:     vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2:             %[[D:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// AVX2:             %[[ACC:.*]] = vector.fma %{{.*}}, %[[D]], %{{.*}} : vector<8xf32>
// AVX2:             %[[M:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// AVX2:             vector.fma %{{.*}}, %[[M]], %[[ACC]] : vector<8xf32>
func.func @q4_1(%a: tensor<1x64xf32>, %w: tensor<20xi32>) -> tensor<1x2xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_1>, k = 64 : i64, n = 2 : i64} (%a, %w) : (tensor<1x64xf32>, tensor<20xi32>) -> tensor<1x2xf32>
  return %c : tensor<1x2xf32>
}

// -----

// Q4_K: a step per super-block of 256 (the loop to K / 256 = 2), four chunks
// of 64 each; a chunk's 32 bytes of nibbles read as 8 words (low nibbles its
// first sub-block, high nibbles its second). The sub-blocks' 6-bit scales
// and minimums unpacked from the 12 scale bytes: the first four's as the low
// 6 bits of a byte, the last four's from a nibble and 2 high bits of
// another byte; each scale d * sc, each minimum -dmin * m.
// AVX2-LABEL: func.func @q4_k
// AVX2:           scf.for %{{.*}} = %c0 to %c2 step
// AVX2:             arith.andi %{{.*}}, %c63_i32{{.*}} : i32
// AVX2:             arith.uitofp %{{.*}} : i32 to f32
// AVX2:             arith.negf %{{.*}} : f32
// AVX2:             vector.transfer_read %{{.*}} : tensor<72xi32>, vector<8xi32>
// AVX2:             vector.transfer_read %{{.*}} : tensor<72xi32>, vector<8xi32>
// AVX2:             %[[HI2:.*]] = arith.shrui %{{.*}}, %c6_i32{{.*}} : i32
// AVX2:             %[[TOP:.*]] = arith.shli %[[HI2]], %c4_i32{{.*}} : i32
// AVX2:             arith.ori %{{.*}}, %[[TOP]] : i32
// AVX2:             vector.transfer_read %{{.*}} : tensor<72xi32>, vector<8xi32>
// AVX2:             vector.transfer_read %{{.*}} : tensor<72xi32>, vector<8xi32>
// AVX2-NOT:         vector.transfer_read %{{.*}} : tensor<72xi32>, vector<8xi32>
// AVX2:             scf.yield
func.func @q4_k(%a: tensor<1x512xf32>, %w: tensor<72xi32>) -> tensor<1x1xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_k>, k = 512 : i64, n = 1 : i64} (%a, %w) : (tensor<1x512xf32>, tensor<72xi32>) -> tensor<1x1xf32>
  return %c : tensor<1x1xf32>
}

// -----

// Q5_K: the super-block's 32 bytes of fifth bits read as 8 words next to the
// chunk's quants; nibble f of lane l's word takes bit 8 * (f / 2) + 2c +
// f % 2 of lane l's word of fifth bits (chunk 0: bits 0 and 1 of byte 0),
// moved to bit 4 by one shift and masked.
// AVX2-LABEL: func.func @q5_k
// AVX2:           scf.for
// AVX2:             %[[Q:.*]] = vector.transfer_read %{{.*}} : tensor<44xi32>, vector<8xi32>
// AVX2:             %[[H:.*]] = vector.transfer_read %{{.*}} : tensor<44xi32>, vector<8xi32>
// Nibble 0 needs no shift; its bit 0 goes up by 4.
// AVX2:             %[[N0:.*]] = arith.andi %[[Q]], %{{.*}} : vector<8xi32>
// AVX2:             %[[B0:.*]] = arith.shli %[[H]], %{{.*}} : vector<8xi32>
// AVX2:             %[[S0:.*]] = arith.andi %[[B0]], %{{.*}} : vector<8xi32>
// AVX2:             arith.ori %[[N0]], %[[S0]] : vector<8xi32>
// Nibble 1 down by 4; its bit 1 up by 3.
// AVX2:             arith.shrui %[[Q]], %{{.*}} : vector<8xi32>
// AVX2:             arith.shli %[[H]], %{{.*}} : vector<8xi32>
func.func @q5_k(%a: tensor<1x256xf32>, %w: tensor<44xi32>) -> tensor<1x1xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q5_k>, k = 256 : i64, n = 1 : i64} (%a, %w) : (tensor<1x256xf32>, tensor<44xi32>) -> tensor<1x1xf32>
  return %c : tensor<1x1xf32>
}

// -----

// Dynamic rows (a static dim before them: no branch on their count): A
// padded with zero rows to a multiple of 8 at run time, packed, tiles of 8
// rows of A (by 2 of W) to the padded row count, the result sliced to A's
// rows and expanded.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT:     scf.if
// CHECK:         %[[DIM:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x128xf32>
// CHECK:         %[[TILES:.*]] = arith.ceildivui %[[DIM]], %c8
// CHECK:         %[[PADDED:.*]] = arith.muli %[[TILES]], %c8
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 128] [1, 1] : tensor<?x128xf32> into tensor<?x128xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [%{{.*}}, 2, 2, 8, 4] : tensor<?x128xf32> into tensor<?x2x2x8x4xf32>
// CHECK:         tensor.empty(%[[PADDED]]) : tensor<?x16xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (%[[TILES]], 8)
// CHECK:             vector.fma
// CHECK:           tensor.parallel_insert_slice %{{.*}} [8, 2] [1, 1] : tensor<8x2xf32> into tensor<?x16xf32>
// CHECK:         %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%[[DIM]], 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
// CHECK:         tensor.expand_shape %[[ROWS]] {{.*}} output_shape [2, %{{.*}}, 16] : tensor<?x16xf32> into tensor<2x?x16xf32>
func.func @dynamic_rows(%a: tensor<2x?x128xf32>, %w: tensor<544xi32>) -> tensor<2x?x16xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 128 : i64, n = 16 : i64} (%a, %w) : (tensor<2x?x128xf32>, tensor<544xi32>) -> tensor<2x?x16xf32>
  return %c : tensor<2x?x16xf32>
}

// -----

// REPORT: not scheduled: the quantized schedule needs static weights and K, and at most one dynamic dim of rows
func.func @two_dynamic_dims(%a: tensor<?x?x128xf32>, %w: tensor<544xi32>) -> tensor<?x?x16xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 128 : i64, n = 16 : i64} (%a, %w) : (tensor<?x?x128xf32>, tensor<544xi32>) -> tensor<?x?x16xf32>
  return %c : tensor<?x?x16xf32>
}

// -----

// Q6_K: a step of two super-blocks (105 words), eight chunks; A's K split
// as [K/128, high, t, word, byte] into the order of the chunks. Per chunk,
// 8 words of low nibbles and the 8 words of qh holding their top two bits,
// combined and offset by 32; the super-block's 16 int8 scales read as four
// words, widened and scaled by d once, and shuffled into the lanes of the
// chunk's four sub-blocks of 16 (chunk 0: sc[0], sc[1], sc[4], sc[5]).
// CHECK-LABEL: func.func @q6_k
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 8, 2, 2, 8, 4] : tensor<1x1024xf32> into tensor<1x8x2x2x8x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x8x2x2x8x4xf32>) outs(%{{.*}} : tensor<1x8x2x4x2x8xf32>)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2
// CHECK:             vector.transfer_read %{{.*}} : tensor<840xi32>, vector<8xi32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<840xi32>, vector<8xi32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<840xi32>, vector<4xi32>
// CHECK:             vector.bitcast %{{.*}} : vector<4xi32> to vector<16xi8>
// CHECK:             arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK:             arith.shli %{{.*}} : vector<16xi32>
// CHECK:             arith.ori %{{.*}} : vector<16xi32>
// CHECK:             %[[BIASED:.*]] = arith.ori %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:             %[[F:.*]] = arith.bitcast %[[BIASED]] : vector<16xi32> to vector<16xf32>
// CHECK:             arith.subf %[[F]], %{{.*}} : vector<16xf32>
// CHECK:             vector.fma
// CHECK:             vector.shuffle %{{.*}} [0, 0, 0, 0, 1, 1, 1, 1, 4, 4, 4, 4, 5, 5, 5, 5] : vector<16xf32>, vector<16xf32>
func.func @q6_k(%a: tensor<1x1024xf32>, %w: tensor<840xi32>) -> tensor<1x4xf32> {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q6_k>, k = 1024 : i64, n = 4 : i64} (%a, %w) : (tensor<1x1024xf32>, tensor<840xi32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Q2_K: a step per super-block (21 words), four chunks; each chunk's 8
// words of 2-bit quants (two per byte of it), the super-block's 16 scale
// bytes read as four words, their low nibbles (scales, times d) and high
// ones (minimums, times -dmin) widened once, shuffled into the lanes of the
// chunk's four sub-blocks of 16 (chunk 0: sub-blocks 0 to 3).
// CHECK-LABEL: func.func @q2_k
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 8, 2, 8, 4] : tensor<1x512xf32> into tensor<1x8x2x8x4xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2
// CHECK:             vector.transfer_read %{{.*}} : tensor<168xi32>, vector<8xi32>
// CHECK:             vector.bitcast %{{.*}} : vector<4xi32> to vector<16xi8>
// CHECK:             arith.andi %{{.*}} : vector<16xi8>
// CHECK:             arith.uitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK:             arith.shrui %{{.*}} : vector<16xi8>
// CHECK:             arith.uitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK:             vector.shuffle %{{.*}} [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<16xf32>, vector<16xf32>
// CHECK:             vector.shuffle %{{.*}} [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<16xf32>, vector<16xf32>
func.func @q2_k(%a: tensor<1x512xf32>, %w: tensor<168xi32>) -> tensor<1x4xf32> {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q2_k>, k = 512 : i64, n = 4 : i64} (%a, %w) : (tensor<1x512xf32>, tensor<168xi32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Q3_K: a step of two super-blocks (55 words); the 6-bit scales unpacked
// from 12 bytes into four words, widened, less 32, times d; per chunk, the
// 2-bit quants and the hmask bit above them, less 4.
// CHECK-LABEL: func.func @q3_k
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c1
// CHECK:             vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:             vector.bitcast %{{.*}} : vector<4xi32> to vector<16xi8>
// CHECK:             arith.uitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK:             arith.subf
// CHECK:             arith.ori %{{.*}} : vector<16xi32>
// CHECK:             %[[BIASED:.*]] = arith.ori %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:             %[[F:.*]] = arith.bitcast %[[BIASED]] : vector<16xi32> to vector<16xf32>
// CHECK:             arith.subf %[[F]], %{{.*}} : vector<16xf32>
func.func @q3_k(%a: tensor<1x512xf32>, %w: tensor<220xi32>) -> tensor<1x4xf32> {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q3_k>, k = 512 : i64, n = 4 : i64} (%a, %w) : (tensor<1x512xf32>, tensor<220xi32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Prefill: 32 rows of A run on panels (with AVX2, register tiles of 4
// rows of A by 16 rows of W, fused_linear's). An iteration takes 32 rows
// of A by 16 rows of W; its tile of C starts from zeros and holds the sums
// from panel to panel. Per panel (a Q4_K super-block: 256 weights), each
// row of W is dequantized once into `rows` [16, 256], transposed 8 x 8 at
// a time into the panel [256, 16] (24 shuffles: blocks of 4, 2, 1 lanes
// swapped), and every register tile of the 32 rows runs over the panel: an
// element of A broadcast, times the panel's two vectors of a step.
// AVX2-LABEL: func.func @panels
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2)
// AVX2:           %[[C:.*]] = tensor.extract_slice %{{.*}} [32, 16] [1, 1] : tensor<32x32xf32> to tensor<32x16xf32>
// AVX2:           %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<32x16xf32>)
// AVX2:           %[[ROWS:.*]] = tensor.empty() : tensor<16x256xf32>
// AVX2:           %[[PANEL:.*]] = tensor.empty() : tensor<256x16xf32>
// AVX2:           scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %[[ZEROS]], %{{.*}} = %[[ROWS]], %{{.*}} = %[[PANEL]])
// AVX2:             scf.for %{{.*}} = %{{.*}} to %c16{{.*}} -> (tensor<16x256xf32>)
// AVX2-COUNT-8:       vector.transfer_write %{{.*}} : vector<8xf32>, tensor<16x256xf32>
// AVX2:             scf.for %{{.*}} = %{{.*}} to %c256{{.*}} step %c8{{.*}} -> (tensor<256x16xf32>)
// AVX2-COUNT-8:       vector.transfer_read %{{.*}} : tensor<16x256xf32>, vector<8xf32>
// AVX2-COUNT-8:       vector.shuffle %{{.*}}, %{{.*}} [{{0, 1, 2, 3, 8, 9, 10, 11|4, 5, 6, 7, 12, 13, 14, 15}}] : vector<8xf32>, vector<8xf32>
// AVX2-COUNT-8:       vector.shuffle %{{.*}}, %{{.*}} [{{0, 1, 8, 9, 4, 5, 12, 13|2, 3, 10, 11, 6, 7, 14, 15}}] : vector<8xf32>, vector<8xf32>
// AVX2-COUNT-8:       vector.shuffle %{{.*}}, %{{.*}} [{{0, 8, 2, 10, 4, 12, 6, 14|1, 9, 3, 11, 5, 13, 7, 15}}] : vector<8xf32>, vector<8xf32>
// AVX2-COUNT-8:       vector.transfer_write %{{.*}} : vector<8xf32>, tensor<256x16xf32>
// AVX2:             scf.for %{{.*}} = %{{.*}} to %c32{{.*}} step %c4{{.*}} -> (tensor<32x16xf32>)
// AVX2-COUNT-8:       vector.transfer_read %{{.*}} : tensor<32x16xf32>, vector<8xf32>
// AVX2:               scf.for %{{.*}} = %{{.*}} to %c256{{.*}} step %c8{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-2:         vector.transfer_read %{{.*}} : tensor<256x16xf32>, vector<8xf32>
// AVX2:                 %[[X:.*]] = tensor.extract %{{.*}} : tensor<32x512xf32>
// AVX2:                 %[[XV:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// AVX2:                 vector.fma %[[XV]], %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2:                 vector.fma %[[XV]], %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2-COUNT-8:       vector.transfer_write %{{.*}} : vector<8xf32>, tensor<32x16xf32>
// AVX2:         scf.forall.in_parallel
// AVX2-NOT:     vector.reduction
func.func @panels(%a: tensor<32x512xf32>, %w: tensor<2304xi32>) -> tensor<32x32xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_k>, k = 512 : i64, n = 32 : i64} (%a, %w) : (tensor<32x512xf32>, tensor<2304xi32>) -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}

// -----

// Q6_K from 16 rows (its decoding costs the most), a step of two
// super-blocks two panels: each dequantized and run over in turn. Q4_0
// with 16 rows stays on tiles of 8 rows of A (one accumulator per row of A
// and of W, reduced once).
// AVX2-LABEL: func.func @panels_from_16_rows
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// AVX2:           scf.for %{{.*}} = %c0 to %c1{{(_[0-9]+)?}} step %c1 iter_args
// AVX2-COUNT-2:     scf.for %{{.*}} -> (tensor<16x256xf32>)
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (2, 16)
// AVX2:           scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2:           vector.reduction <add>
func.func @panels_from_16_rows(%a: tensor<16x512xf32>, %w: tensor<1680xi32>, %a4: tensor<16x256xf32>, %w4: tensor<576xi32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q6_k>, k = 512 : i64, n = 16 : i64} (%a, %w) : (tensor<16x512xf32>, tensor<1680xi32>) -> tensor<16x16xf32>
  %c4 = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 256 : i64, n = 16 : i64} (%a4, %w4) : (tensor<16x256xf32>, tensor<576xi32>) -> tensor<16x16xf32>
  return %c, %c4 : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Dynamic rows with nothing static before them (tokens): one row runs as a
// static [1, K] (a's row sliced), 2 to 4 rows as a static [4, K] (a's rows
// padded with zero rows, the result sliced back), more in tiles of 4 rows
// to a multiple of 4 padded at run time.
// CHECK-LABEL: func.func @awq_dynamic_tokens
// CHECK:         %[[ROWS:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %[[ROWS]], %c1
// CHECK:         scf.if %[[ONE]] -> (tensor<?x64xf32>) {
// CHECK:           tensor.extract_slice %arg0[0, 0] [1, 128] [1, 1] : tensor<?x128xf32> to tensor<1x128xf32>
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) in (1, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x64xf32>)
// CHECK:         } else {
// CHECK:           %[[FEW:.*]] = arith.cmpi ule, %[[ROWS]], %c4
// CHECK:           scf.if %[[FEW]] -> (tensor<?x64xf32>) {
// CHECK:             tensor.insert_slice %arg0 into %{{.*}}[0, 0] [%{{.*}}, 128] [1, 1] : tensor<?x128xf32> into tensor<4x128xf32>
// CHECK:             scf.forall (%{{.*}}, %{{.*}}) in (1, 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64xf32>)
// CHECK:             tensor.extract_slice %{{.*}}[0, 0] [%[[ROWS]], 64] [1, 1] : tensor<4x64xf32> to tensor<?x64xf32>
// CHECK:           } else {
// CHECK:             %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c4
// CHECK:             tensor.insert_slice %arg0 into %{{.*}}[0, 0] [%{{.*}}, 128] [1, 1] : tensor<?x128xf32> into tensor<?x128xf32>
// CHECK:             scf.forall (%{{.*}}, %{{.*}}) in (%[[TILES]], 1) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<?x64xf32>)
// CHECK:               tensor.parallel_insert_slice %{{.*}} [4, 64] [1, 1] : tensor<4x64xf32> into tensor<?x64xf32>
// CHECK:             tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
func.func @awq_dynamic_tokens(%a: tensor<?x128xf32>, %q: tensor<128x8xi32>, %z: tensor<2x8xi32>, %s: tensor<2x64xf32>) -> tensor<?x64xf32> {
  %c = fuel.fused awq_matmul {group_size = 64 : i64} (%a, %q, %z, %s) : (tensor<?x128xf32>, tensor<128x8xi32>, tensor<2x8xi32>, tensor<2x64xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// -----

// Dynamic rows where the panels fit N: 5 to 16 rows run on the tiles of 8
// rows, more on panels (Q4_0's fewest rows on panels: 17), in blocks of 128 rows (C padded to whole blocks, a
// only to a multiple of the register tile's 8 rows), each block's register
// tiles stopping at its rows of a.
// CHECK-LABEL: func.func @dynamic_rows_on_panels
// CHECK:         %[[ROWS:.*]] = tensor.dim %arg0, %c0
// CHECK:         arith.cmpi eq, %[[ROWS]], %c1
// CHECK:         arith.cmpi ule, %[[ROWS]], %c4
// CHECK:         %[[SOME:.*]] = arith.cmpi ule, %[[ROWS]], %c16
// CHECK:         scf.if %[[SOME]] -> (tensor<?x64xf32>) {
// CHECK:           %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c8
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) in (%[[TILES]], 32)
// CHECK:         } else {
// CHECK:           %[[R:.*]] = tensor.dim %arg0, %c0
// CHECK:           %[[BLOCKS:.*]] = arith.ceildivui %[[R]], %c128
// CHECK:           %[[UNITS:.*]] = arith.ceildivui %[[R]], %c8
// CHECK:           %[[PADDED:.*]] = arith.muli %[[UNITS]], %c8
// CHECK:           tensor.empty(%[[PADDED]]) : tensor<?x256xf32>
// CHECK:           scf.forall (%[[I:.*]], %{{.*}}) in (%[[BLOCKS]], 2)
// CHECK:             %[[M0:.*]] = arith.muli %[[I]], %c128
// CHECK:             %[[LEFT:.*]] = arith.subi %[[PADDED]], %[[M0]]
// CHECK:             %[[LIVE:.*]] = arith.minui %[[LEFT]], %c128
// CHECK:             tensor.extract_slice %{{.*}}[%[[M0]], %{{.*}}] [128, 32]
// CHECK:             scf.for %{{.*}} = %{{.*}} to %[[LIVE]] step %c8
// CHECK:           tensor.extract_slice %{{.*}}[0, 0] [%[[R]], 64] [1, 1]
func.func @dynamic_rows_on_panels(%a: tensor<?x256xf32>, %w: tensor<2304xi32>) -> tensor<?x64xf32> {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 256 : i64, n = 64 : i64} (%a, %w) : (tensor<?x256xf32>, tensor<2304xi32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// -----

// Static rows that are not whole tiles: padded with zero rows and sliced
// back. 5 rows: one tile of 8. 130 rows on panels: a padded to 136 (the
// register tile's 8 rows), C to two blocks of 128, the second block's
// register tiles stopping at a's rows.
// CHECK-LABEL: func.func @static_rows_padded
// CHECK:         tensor.insert_slice %arg0 into %{{.*}}[0, 0] [5, 256] [1, 1] : tensor<5x256xf32> into tensor<8x256xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 32) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8x64xf32>)
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [5, 64] [1, 1] : tensor<8x64xf32> to tensor<5x64xf32>
// CHECK:         tensor.insert_slice %arg2 into %{{.*}}[0, 0] [130, 256] [1, 1] : tensor<130x256xf32> into tensor<136x256xf32>
// CHECK:         %[[A_ROWS:.*]] = arith.constant 136 : index
// CHECK:         scf.forall (%[[I:.*]], %{{.*}}) in (2, 2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<256x64xf32>)
// CHECK:           %[[M0:.*]] = arith.muli %[[I]], %c128
// CHECK:           %[[LEFT:.*]] = arith.subi %[[A_ROWS]], %[[M0]]
// CHECK:           %[[LIVE:.*]] = arith.minui %[[LEFT]], %c128
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[LIVE]] step %c8
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [130, 64] [1, 1] : tensor<256x64xf32> to tensor<130x64xf32>
func.func @static_rows_padded(%a: tensor<5x256xf32>, %w: tensor<2304xi32>, %b: tensor<130x256xf32>) -> (tensor<5x64xf32>, tensor<130x64xf32>) {
  %c = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 256 : i64, n = 64 : i64} (%a, %w) : (tensor<5x256xf32>, tensor<2304xi32>) -> tensor<5x64xf32>
  %d = fuel.fused qmatmul {quant_type = #fuel.quant<q4_0>, k = 256 : i64, n = 64 : i64} (%b, %w) : (tensor<130x256xf32>, tensor<2304xi32>) -> tensor<130x64xf32>
  return %c, %d : tensor<5x64xf32>, tensor<130x64xf32>
}

// -----

// f64 activations lower as decomposed, with the reason.
// CHECK-LABEL: func.func @f64_activations
// CHECK:         fuel.fused qmatmul
// CHECK:         fuel.fused nf4_matmul
// CHECK:         fuel.fused awq_matmul
// REPORT: qmatmul not scheduled: the quantized schedule handles f32, f16 and bf16 activations
// REPORT: nf4_matmul not scheduled: the quantized schedule handles f32, f16 and bf16 activations
// REPORT: awq_matmul not scheduled: the quantized schedule handles f32, f16 and bf16 activations and scales
func.func @f64_activations(%a: tensor<1x64xf64>, %w: tensor<34xi32>, %a2: tensor<4x128xf64>, %w2: tensor<8x64xi8>, %s2: tensor<8x2xf32>,
                           %a3: tensor<1x128xf64>, %q: tensor<128x16xi32>, %z: tensor<2x16xi32>, %s: tensor<2x128xf64>)
    -> (tensor<1x2xf64>, tensor<4x8xf64>, tensor<1x128xf64>) {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 64 : i64, n = 2 : i64} (%a, %w) : (tensor<1x64xf64>, tensor<34xi32>) -> tensor<1x2xf64>
  %1 = fuel.fused nf4_matmul (%a2, %w2, %s2) : (tensor<4x128xf64>, tensor<8x64xi8>, tensor<8x2xf32>) -> tensor<4x8xf64>
  %2 = fuel.fused awq_matmul {group_size = 64 : i64} (%a3, %q, %z, %s) : (tensor<1x128xf64>, tensor<128x16xi32>, tensor<2x16xi32>, tensor<2x128xf64>) -> tensor<1x128xf64>
  return %0, %1, %2 : tensor<1x2xf64>, tensor<4x8xf64>, tensor<1x128xf64>
}

// -----

// What the schedule leaves to the decomposition, with the reason.
// CHECK-LABEL: func.func @unscheduled
// CHECK-COUNT-2: fuel.fused qmatmul
// CHECK: fuel.fused awq_matmul
// REPORT: not scheduled: the quantized schedule needs K a multiple of 512 (got 256)
// REPORT: not scheduled: the quantized schedule needs K a multiple of 64 (got 32)
// REPORT: not scheduled: the quantized schedule needs N a multiple of 16 (got 8)
func.func @unscheduled(%a: tensor<2x64xf32>, %a256: tensor<2x256xf32>, %w: tensor<210xi32>, %a32: tensor<2x32xf32>, %w8: tensor<34xi32>,
                       %q: tensor<64x1xi32>, %z: tensor<1x1xi32>, %s: tensor<1x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x8xf32>) {
  %0 = fuel.fused qmatmul {quant_type = #fuel.quant<q6_k>, k = 256 : i64, n = 4 : i64} (%a256, %w) : (tensor<2x256xf32>, tensor<210xi32>) -> tensor<2x4xf32>
  %1 = fuel.fused qmatmul {quant_type = #fuel.quant<q8_0>, k = 32 : i64, n = 4 : i64} (%a32, %w8) : (tensor<2x32xf32>, tensor<34xi32>) -> tensor<2x4xf32>
  %2 = fuel.fused awq_matmul {group_size = 64 : i64} (%a, %q, %z, %s) : (tensor<2x64xf32>, tensor<64x1xi32>, tensor<1x1xi32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x8xf32>
}

// -----

// awq_matmul: the weight is K-major; a tile is the columns of a vector of
// words (16 with AVX-512, 8 with AVX2), each nibble position a vector of
// its own (no shuffle per k): shifted to the top of a mantissa and or'd
// into 1.0 (1 + q / 16), times A[m, k]. A block of tiles side by side
// reads each row of its words tile after tile, into the group's partial
// sums in memory ([tiles, rows * 8, lanes], zeroed at each group); per
// group, A's sum, and the group's zeros (decoded as the weight) and its
// scales (times 16, shuffled into the nibble order) take the partial sums
// into the accumulators (in memory too); each tile is shuffled back into
// column order when it is written.
// CHECK-LABEL: func.func @awq
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:           %[[ACC0:.*]] = linalg.fill {{.*}} -> tensor<1x8x16xf32>
// CHECK:           %[[PART0:.*]] = tensor.empty() : tensor<1x8x16xf32>
// CHECK:           %[[GROUPS:.*]]:2 = scf.for %[[G:[a-z0-9_]+]] = {{.*}} iter_args(%{{.*}} = %[[ACC0]], %[[PARTIN:.*]] = %[[PART0]]) -> (tensor<1x8x16xf32>, tensor<1x8x16xf32>)
// CHECK:             %[[ZEROED:.*]] = linalg.fill {{.*}} outs(%[[PARTIN]] : tensor<1x8x16xf32>)
// CHECK:             %[[STEPS:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROED]], %{{.*}} = %{{.*}}) -> (tensor<1x8x16xf32>, f32)
// CHECK:               tensor.extract %{{.*}} : tensor<1x128xf32>
// CHECK:               arith.addf {{.*}} : f32
// CHECK:               scf.for %[[T:[a-z0-9_]+]] = {{.*}} -> (tensor<1x8x16xf32>)
// CHECK:                 vector.transfer_read %{{.*}} : tensor<128x16xi32>, vector<16xi32>
// CHECK:                 arith.shli %{{.*}}, %cst{{.*}} : vector<16xi32>
// CHECK:                 arith.andi
// CHECK:                 arith.ori
// CHECK:                 arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK:                 vector.transfer_read %{{.*}}[%[[T]], %c0{{.*}}, %c0{{.*}}]{{.*}} : tensor<1x8x16xf32>, vector<16xf32>
// CHECK:                 vector.fma
// CHECK:                 vector.transfer_write %{{.*}}[%[[T]], %c0{{.*}}, %c0{{.*}}]{{.*}} : vector<16xf32>, tensor<1x8x16xf32>
// CHECK-NOT:             vector.shuffle
// CHECK:                 scf.yield
// CHECK:             scf.for {{.*}} -> (tensor<1x8x16xf32>)
// CHECK:               vector.transfer_read %{{.*}}[%[[G]], %{{.*}}]{{.*}} : tensor<2x16xi32>, vector<16xi32>
// CHECK:               vector.transfer_read %{{.*}}[%[[G]], %{{.*}}]{{.*}} : tensor<2x128xf32>, vector<128xf32>
// CHECK:               vector.shuffle %{{.*}} [0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120]
// CHECK:               vector.transfer_read %[[STEPS]]#0
// CHECK:               vector.fma
// CHECK:               vector.fma
// CHECK:               vector.transfer_write
// CHECK:           scf.for {{.*}} -> (tensor<1x128xf32>)
// CHECK-COUNT-8:     vector.transfer_read %[[GROUPS]]#0
// CHECK:             vector.shuffle {{.*}} : vector<128xf32>, vector<128xf32>
// CHECK:             vector.transfer_write {{.*}} : vector<128xf32>, tensor<1x128xf32>
// AVX2-LABEL: func.func @awq
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// AVX2:                 vector.transfer_read %{{.*}} : tensor<128x16xi32>, vector<8xi32>
// AVX2:               vector.shuffle %{{.*}} [0, 8, 16, 24, 32, 40, 48, 56] : vector<64xf32>
func.func @awq(%a: tensor<1x128xf32>, %q: tensor<128x16xi32>, %z: tensor<2x16xi32>, %s: tensor<2x128xf32>) -> tensor<1x128xf32> {
  %c = fuel.fused awq_matmul {group_size = 64 : i64} (%a, %q, %z, %s) : (tensor<1x128xf32>, tensor<128x16xi32>, tensor<2x16xi32>, tensor<2x128xf32>) -> tensor<1x128xf32>
  return %c : tensor<1x128xf32>
}

// -----

// A block of tiles side by side along N, as many as 16 KiB of partial
// sums hold: a tile is both rows of A by 8 vectors (with AVX-512 of 16
// lanes: 1 KiB, all 8 tiles; with AVX2 of 8: 512 bytes, all 16). Either
// way the whole row of the weight is read tile after tile (consecutive
// addresses); with two rows of A a step takes 4 rows of the weight (each
// tile reads 4 vectors of words, each nibble position's partial sums
// loaded and stored once per 8 multiply-adds); f16 activations and scales
// widened, the tiles narrowed as written.
// CHECK-LABEL: func.func @awq_blocks
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:           linalg.fill {{.*}} -> tensor<8x16x16xf32>
// CHECK:           scf.for {{.*}} to %c2{{.*}} -> (tensor<8x16x16xf32>, tensor<8x16x16xf32>)
// CHECK:             scf.for {{.*}} to %c128{{.*}} step %c4 {{.*}} -> (tensor<8x16x16xf32>, f32, f32)
// CHECK-COUNT-8:       vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:               scf.for %[[T:.*]] = {{.*}} to %c8{{.*}} -> (tensor<8x16x16xf32>)
// CHECK-COUNT-4:         vector.transfer_read %arg1{{.*}} : tensor<256x128xi32>, vector<16xi32>
// CHECK:                 %[[P0:.*]] = vector.transfer_read %{{.*}}[%[[T]], %c0{{.*}}, %c0{{.*}}]{{.*}} : tensor<8x16x16xf32>, vector<16xf32>
// CHECK-COUNT-4:         vector.fma
// CHECK-NOT:             vector.fma
// CHECK:                 vector.transfer_write %{{.*}}[%[[T]], %c0{{.*}}, %c0{{.*}}]{{.*}} : vector<16xf32>, tensor<8x16x16xf32>
// CHECK:                 %[[P1:.*]] = vector.transfer_read %{{.*}}[%[[T]], %c8{{.*}}, %c0{{.*}}]{{.*}} : tensor<8x16x16xf32>, vector<16xf32>
// CHECK-COUNT-4:         vector.fma
// CHECK-NOT:             vector.fma
// CHECK:                 vector.transfer_write %{{.*}}[%[[T]], %c8{{.*}}, %c0{{.*}}]{{.*}} : vector<16xf32>, tensor<8x16x16xf32>
// CHECK:             scf.for {{.*}} to %c8{{.*}} -> (tensor<8x16x16xf32>)
// CHECK:           scf.for {{.*}} to %c8{{.*}} -> (tensor<2x1024xf16>)
// CHECK-COUNT-2:     vector.transfer_write {{.*}} : vector<128xf16>, tensor<2x1024xf16>
// AVX2-LABEL: func.func @awq_blocks
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// AVX2:           linalg.fill {{.*}} -> tensor<16x16x8xf32>
// AVX2:             scf.for {{.*}} to %c128{{.*}} step %c4 {{.*}} -> (tensor<16x16x8xf32>, f32, f32)
// AVX2:               scf.for {{.*}} to %c16{{.*}} -> (tensor<16x16x8xf32>)
// AVX2-COUNT-4:         vector.transfer_read %arg1{{.*}} : tensor<256x128xi32>, vector<8xi32>
// AVX2:           scf.for {{.*}} to %c16{{.*}} -> (tensor<2x1024xf16>)
func.func @awq_blocks(%a: tensor<2x256xf16>, %q: tensor<256x128xi32>, %z: tensor<2x128xi32>, %s: tensor<2x1024xf16>) -> tensor<2x1024xf16> {
  %c = fuel.fused awq_matmul {group_size = 128 : i64} (%a, %q, %z, %s) : (tensor<2x256xf16>, tensor<256x128xi32>, tensor<2x128xi32>, tensor<2x1024xf16>) -> tensor<2x1024xf16>
  return %c : tensor<2x1024xf16>
}

// -----

// awq_matmul with 128 rows of A runs on panels (with AVX2, 4 x 16 register
// tiles): an iteration takes the 128 rows by a vector of words' 64 columns
// and walks K a panel of 64 steps at a time; per panel, the group's zeros
// (1 + z / 16) and scales (times 16, gathered into nibble order), then
// each step's words dequantized once, a vector per nibble position, into
// the panel [64, 64]; the register tiles run over its column pairs; each
// row of sums shuffled back into column order at the end.
// AVX2-LABEL: func.func @awq_panels
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2)
// AVX2:           linalg.fill {{.*}} -> tensor<128x64xf32>
// AVX2:           tensor.empty() : tensor<64x64xf32>
// AVX2:           scf.for {{.*}} to %c4 {{.*}} -> (tensor<128x64xf32>, tensor<64x64xf32>)
// AVX2:             vector.transfer_read %{{.*}} : tensor<2x16xi32>, vector<8xi32>
// AVX2:             vector.transfer_read %{{.*}} : tensor<2x128xf32>, vector<64xf32>
// AVX2:             vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 24, 32, 40, 48, 56] : vector<64xf32>, vector<64xf32>
// AVX2:             scf.for {{.*}} to %c64{{.*}} step %c1{{.*}} -> (tensor<64x64xf32>)
// AVX2:               vector.transfer_read %{{.*}} : tensor<256x16xi32>, vector<8xi32>
// AVX2-COUNT-8:       arith.subf
// AVX2:             scf.for {{.*}} to %c64{{.*}} step %c16 {{.*}} -> (tensor<128x64xf32>)
// AVX2:               scf.for {{.*}} to %c128{{.*}} step %c4{{.*}} -> (tensor<128x64xf32>)
// AVX2:                 scf.for {{.*}} to %c64{{.*}} step %c8{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2:                   vector.broadcast %{{.*}} : f32 to vector<8xf32>
// AVX2:                   vector.fma
// AVX2:           scf.for {{.*}} to %c128{{.*}} -> (tensor<128x64xf32>)
// AVX2:             vector.shuffle %{{.*}}, %{{.*}} [0, 32, 8, 40, 16, 48, 24, 56, 1, 33,
// AVX2:         scf.forall.in_parallel
func.func @awq_panels(%a: tensor<128x256xf32>, %q: tensor<256x16xi32>, %z: tensor<2x16xi32>, %s: tensor<2x128xf32>) -> tensor<128x128xf32> {
  %0 = fuel.fused awq_matmul {group_size = 128 : i64} (%a, %q, %z, %s) : (tensor<128x256xf32>, tensor<256x16xi32>, tensor<2x16xi32>, tensor<2x128xf32>) -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// nf4_matmul: A copied once into the order of the codes ([K/32, 1, 16, 2]
// to [K/32, 1, 2, 16]); tiles of 4 rows of A by 4 of W; steps of 32 weights
// (16 bytes) per row of W, widened to i32 lanes and split into high and low
// nibbles, each looked up in the code book held in a vector (an extract at a
// dynamic position per lane, which x86 selects as vpermps; no gather) and
// scaled by the block's absmax.
// CHECK-LABEL: func.func @nf4
// CHECK:         tensor.expand_shape %{{.*}} output_shape [4, 4, 1, 16, 2] : tensor<4x128xf32> into tensor<4x4x1x16x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x4x1x16x2xf32>) outs(%{{.*}} : tensor<4x4x1x2x16xf32>)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 2)
// CHECK:           scf.for
// CHECK:             tensor.extract %{{.*}} : tensor<8x2xf32>
// CHECK:             vector.transfer_read %{{.*}} : tensor<8x64xi8>, vector<16xi8>
// CHECK:             arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK:             %[[HIGH:.*]] = arith.shrui %{{.*}} : vector<16xi32>
// CHECK:             arith.andi %{{.*}} : vector<16xi32>
// CHECK:             %[[CODE:.*]] = vector.extract %[[HIGH]][0] : i32 from vector<16xi32>
// CHECK:             %[[AT:.*]] = arith.index_castui %[[CODE]] : i32 to index
// CHECK:             %[[BOOK:.*]] = arith.constant dense<[-1.000000e+00, {{.*}}, 1.000000e+00]> : vector<16xf32>
// CHECK:             vector.extract %[[BOOK]][%[[AT]]] : f32 from vector<16xf32>
// CHECK:             vector.from_elements {{.*}} : vector<16xf32>
// CHECK:             arith.mulf
// CHECK:             vector.fma
// CHECK-NOT:     vector.gather
// With AVX2's registers (8 lanes) the code book does not fit one register:
// A is copied into another order ([K/32, 4, 4, 2] to [K/32, 4, 2, 4]), and
// the step's 16 bytes, twice, become 32 codes (high nibbles in the first 16
// bytes: a shift of 4 in the first half of the i32 lanes, then a mask). Each
// byte of the book's f32 values is a table of 16 bytes, looked up per code
// (one vpshufb), and the four looked-up bytes are interleaved into f32 lanes
// 128 bits at a time (vpunpck{l,h}bw, then vpunpck{l,h}wd). Frozen vectors
// keep LLVM from splitting the lookups.
// AVX2-LABEL: func.func @nf4
// AVX2:         tensor.expand_shape %{{.*}} output_shape [4, 4, 4, 4, 2]
// AVX2:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4x4x2x4xf32>)
// AVX2:         scf.forall (%{{.*}}, %{{.*}}) in (1, 4)
// AVX2:           %[[BYTES:.*]] = vector.transfer_read %{{.*}} : tensor<8x64xi8>, vector<16xi8>
// AVX2:           %[[TWICE:.*]] = vector.shuffle %[[BYTES]], %[[BYTES]] [0, 1, {{.*}}, 15, 0, 1, {{.*}}, 15] : vector<16xi8>, vector<16xi8>
// AVX2:           %[[WORDS:.*]] = vector.bitcast %[[TWICE]] : vector<32xi8> to vector<8xi32>
// AVX2:           %[[SHIFT:.*]] = arith.constant dense<[4, 4, 4, 4, 0, 0, 0, 0]> : vector<8xi32>
// AVX2:           %[[SHIFTED:.*]] = arith.shrui %[[WORDS]], %[[SHIFT]] : vector<8xi32>
// AVX2:           %[[MASK:.*]] = arith.constant dense<252645135> : vector<8xi32>
// AVX2:           %[[NIBBLES:.*]] = arith.andi %[[SHIFTED]], %[[MASK]] : vector<8xi32>
// AVX2:           %[[CODES32:.*]] = vector.bitcast %[[NIBBLES]] : vector<8xi32> to vector<32xi8>
// AVX2:           %[[CODES:.*]] = llvm.freeze %[[CODES32]] : vector<32xi8>
// AVX2:           %[[PLANE0:.*]] = arith.constant dense<[0, -79, 48, -96, 77, 63, 113, 0, -1, -29, -35, 58, -72, -85, -77, 0]> : vector<16xi8>
// AVX2:           %[[PLANE3:.*]] = arith.constant dense<[-65, -65, -65, -66, -66, -66, -67, 0, 61, 62, 62, 62, 62, 63, 63, 63]> : vector<16xi8>
// AVX2:           %[[FIRST:.*]] = vector.extract %[[CODES]][0] : i8 from vector<32xi8>
// AVX2:           %[[AT:.*]] = arith.index_castui %[[FIRST]] : i8 to index
// AVX2:           vector.extract %[[PLANE0]][%[[AT]]] : i8 from vector<16xi8>
// AVX2:           %[[LOW:.*]] = vector.from_elements {{.*}} : vector<32xi8>
// AVX2:           %[[LOW_FROZEN:.*]] = llvm.freeze %[[LOW]] : vector<32xi8>
// AVX2:           vector.extract %[[PLANE3]][%[[AT]]] : i8 from vector<16xi8>
// AVX2:           %[[PAIRS:.*]] = vector.shuffle %[[LOW_FROZEN]], %{{.*}} [0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 16, 48, 17, 49, {{.*}}, 23, 55] : vector<32xi8>, vector<32xi8>
// AVX2:           vector.bitcast %[[PAIRS]] : vector<32xi8> to vector<16xi16>
// AVX2:           %[[QUAD:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 8, 24, 9, 25, 10, 26, 11, 27] : vector<16xi16>, vector<16xi16>
// AVX2:           vector.bitcast %[[QUAD]] : vector<16xi16> to vector<8xf32>
// AVX2-NOT:       arith.select
// AVX2:           vector.fma
// With 128-bit registers (NEON, SSE), the high and the low nibbles are a
// vector of codes each: A's order is [K/32, 4, 4, 2] to [K/32, 2, 4, 4].
// NARROW-LABEL: func.func @nf4
// NARROW:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4x2x4x4xf32>)
// NARROW:           %[[BYTES:.*]] = vector.transfer_read %{{.*}} : tensor<8x64xi8>, vector<16xi8>
// NARROW:           %[[HIGH:.*]] = arith.shrui %[[BYTES]], %{{.*}} : vector<16xi8>
// NARROW:           %[[LOW:.*]] = arith.andi %[[BYTES]], %{{.*}} : vector<16xi8>
// NARROW:           llvm.freeze %[[HIGH]] : vector<16xi8>
// NARROW:           llvm.freeze %[[LOW]] : vector<16xi8>
// NARROW:           vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi8>, vector<16xi8>
// NARROW:           vector.shuffle %{{.*}}, %{{.*}} [4, 12, 5, 13, 6, 14, 7, 15] : vector<8xi16>, vector<8xi16>
// NARROW:           vector.bitcast %{{.*}} : vector<8xi16> to vector<4xf32>
// NARROW-NOT:       arith.select
func.func @nf4(%a: tensor<4x128xf32>, %w: tensor<8x64xi8>, %s: tensor<8x2xf32>) -> tensor<4x8xf32> {
  %c = fuel.fused nf4_matmul (%a, %w, %s) : (tensor<4x128xf32>, tensor<8x64xi8>, tensor<8x2xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
