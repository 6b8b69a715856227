//===- FusedOps.td - The fused-op registry -----------------*- tablegen -*-===//
//
// One record per fused op: identity (stable id and name), family, operands
// with element-type and rank constraints, results, typed params, backward
// link, destructive input, and documentation. Everything else about an op
// (the C++ table, the params schemas, the Python registry, the docs) is
// generated from here by fuel-tblgen. Ids 1..25 are the original registry's
// and never change; ids >= 0x8000 belong to runtime-registered ops.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_FUSEDOPS_TD
#define FUEL_FUSEDOPS_TD

include "FuelFused/IR/FusedOpsBase.td"

//===----------------------------------------------------------------------===//
// Shared params
//===----------------------------------------------------------------------===//

class EpsParam : RequiredParam<"eps", FuelParamF64, [Positive, FiniteFloat],
                               "added to the variance before the square root">;

def AttnParamList {
  list<FusedParam> params = [
    RequiredParam<"softmax_scale", FuelParamF32, [Positive, FiniteFloat],
                  "multiplies q @ k^T">,
    DefaultParam<"causal", FuelParamBool, "false", [],
                 "bottom-right aligned causal mask">,
    OptionalParam<"window_size_left", FuelParamI64, [NonNegative],
                  "keys at most this far left of the diagonal; unset: unbounded">,
    OptionalParam<"window_size_right", FuelParamI64, [NonNegative],
                  "keys at most this far right of the diagonal; unset: unbounded">,
    OptionalParam<"softcap", FuelParamF32, [Positive, FiniteFloat],
                  "scores become c * tanh(s / c)">
  ];
}

class AttnBackwardOp<int id, string name, string gradOf, string res>
    : FusedOp<id, name, Backward> {
  let operands = [
    FusedOperand<"q", FuelAnyFloat, 4, 4, "[B, Hq, Sq, D]">,
    FusedOperand<"k", FuelAnyFloat, 4, 4, "[B, Hkv, Sk, D]">,
    FusedOperand<"v", FuelAnyFloat, 4, 4, "[B, Hkv, Sk, Dv]">,
    FusedOperand<"do", FuelAnyFloat, 4, 4, "[B, Hq, Sq, Dv], upstream gradient">,
    OptionalOperand<"alibi", FuelF32, 1, 2, "slopes [Hq] or [B, Hq]">
  ];
  let results = [FusedResult<res, "gradient w.r.t. " # gradOf # ", shaped like " # gradOf>];
  let params = AttnParamList.params;
  let rule = "flashAttnBackward";
  let decomposition = "flashAttnBackward";
  let schedule = "Attention";
  let recipeNote = "decompose-only until the recipe vocabulary has position "
    "masks (linalg.index) and grouped heads";
  let summary = "gradient of flash_attn w.r.t. " # gradOf;
  let description = "The gradient of `flash_attn`'s output w.r.t. `" # gradOf #
    "` for the upstream gradient `do`, recomputing the scores with the same "
    "params as the forward.";
  let reference = "torch.autograd through scaled_dot_product_attention";
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

def Fused_SoftmaxLastDim : FusedOp<1, "softmax_last_dim", Forward> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 1>];
  let results = [FusedResult<"y">];
  let backward = FusedGrad<["softmax_last_dim_backward"]>;
  let rule = "sameAsFirst";
  let recipe = "softmaxLastDim";
  let schedule = "RowWise";
  let summary = "softmax over the last dim";
  let description = "`y = exp(x - max(x)) / sum(exp(x - max(x)))` over the last dim.";
  let reference = "numpy";
}

def Fused_FusedLinear : FusedOp<2, "fused_linear", Forward> {
  let operands = [
    FusedOperand<"a", FuelAnyFloat, 2, -1, "[..., M, K]">,
    FusedOperand<"b", FuelAnyFloat, 2, 2, "[K, N]">,
    FusedOperand<"bias", FuelAnyFloat, 1, 1, "[N]">
  ];
  let results = [FusedResult<"y", "[..., M, N]">];
  let backward = Decompose;
  let rule = "fusedLinear";
  let recipe = "fusedLinear";
  let schedule = "Contraction";
  let summary = "matmul plus bias";
  let description = "`y = a @ b + bias`, bias broadcast over all but the last dim.";
  let reference = "numpy";
}

def Fused_RmsNormLastDim : FusedOp<3, "rms_norm_last_dim", Norm> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 1>];
  let results = [FusedResult<"y">];
  let params = [EpsParam<>];
  let backward = FusedGrad<["rms_norm_last_dim_backward"]>;
  let rule = "sameAsFirst";
  let recipe = "rmsNormLastDim";
  let schedule = "RowWise";
  let summary = "RMS norm over the last dim, no weight";
  let description = "`y = x / sqrt(mean(x^2) + eps)` over the last dim. A model's "
    "weight multiply stays a separate op.";
  let reference = "numpy";
}

def Fused_LayerNormLastDim : FusedOp<4, "layer_norm_last_dim", Norm> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 1>];
  let results = [FusedResult<"y">];
  let params = [EpsParam<>];
  let backward = FusedGrad<["layer_norm_last_dim_backward"]>;
  let rule = "sameAsFirst";
  let recipe = "layerNormLastDim";
  let schedule = "RowWise";
  let summary = "layer norm over the last dim, no affine";
  let description = "`y = (x - mean) / sqrt(var + eps)` over the last dim, with the "
    "biased variance.";
  let reference = "numpy";
}

def Fused_Rope : FusedOp<5, "rope", Forward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 2, -1, "[..., S, D], D even">,
    FusedOperand<"cos", FuelAnyFloat, 2, 2, "[S, D]">,
    FusedOperand<"sin", FuelAnyFloat, 2, 2, "[S, D]">
  ];
  let results = [FusedResult<"y">];
  let backward = Decompose;
  let rule = "rope";
  let recipe = "rope";
  let schedule = "Rotary";
  let summary = "rotate-half rotary position embedding";
  let description = "`y = x * cos + rotate_half(x) * sin` with "
    "`rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2])` (GPT-NeoX / Llama), "
    "full-width tables broadcast over the leading dims of x.";
  let reference = "numpy";
}

def Fused_Conv2d : FusedOp<6, "conv2d", Forward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 4, 4, "[B, C, H, W]">,
    FusedOperand<"w", FuelAnyFloat, 4, 4, "[F, C/groups, kh, kw]">,
    OptionalOperand<"bias", FuelAnyFloat, 1, 1, "[F]">
  ];
  let results = [FusedResult<"y", "[B, F, Ho, Wo]">];
  let params = [
    DefaultParam<"stride", FuelParamPair, "[1, 1]", [PairAtLeastOne]>,
    DefaultParam<"padding", FuelParamPair, "[0, 0]", [PairNonNegative]>,
    DefaultParam<"groups", FuelParamI64, "1", [AtLeastOne],
                 "divides both C and F">
  ];
  let backward = Decompose;
  let rule = "conv2d";
  let recipe = "conv2d";
  let decomposition = "conv2d";
  let schedule = "Convolution";
  let recipeNote = "the recipe covers one group; grouped convolutions "
                   "decompose by hand";
  let summary = "2-D cross-correlation (NCHW, FCHW), optional bias";
  let description = "PyTorch `conv2d` with dilation 1: "
    "`Ho = (H + 2 * padding[0] - kh) / stride[0] + 1`, likewise `Wo`.";
  let reference = "torch.nn.functional.conv2d";
}

def Fused_SoftmaxLastDimBackward : FusedOp<7, "softmax_last_dim_backward", Backward> {
  let operands = [
    FusedOperand<"y", FuelAnyFloat, 1, -1, "the forward output">,
    FusedOperand<"g", FuelAnyFloat, 1, -1, "upstream gradient, shaped like y">
  ];
  let results = [FusedResult<"dx">];
  let rule = "sameShapePair";
  let recipe = "softmaxLastDimBackward";
  let schedule = "RowWise";
  let summary = "gradient of softmax_last_dim";
  let description = "`dx = y * (g - sum(g * y, last, keepdim))`.";
  let reference = "numpy (analytic) and finite differences";
}

def Fused_LayerNormLastDimBackward : FusedOp<8, "layer_norm_last_dim_backward", Backward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 1, -1, "the forward input">,
    FusedOperand<"g", FuelAnyFloat, 1, -1, "upstream gradient, shaped like x">
  ];
  let results = [FusedResult<"dx">];
  let params = [EpsParam<>];
  let rule = "sameShapePair";
  let recipe = "layerNormLastDimBackward";
  let schedule = "RowWise";
  let summary = "gradient of layer_norm_last_dim";
  let description = "With `r = 1/sqrt(var+eps)` and `xh = (x-mean)*r`: "
    "`dx = r * (g - mean(g) - xh * mean(g * xh))`, recomputing the statistics from x.";
  let reference = "numpy (analytic) and finite differences";
}

def Fused_RmsNormLastDimBackward : FusedOp<9, "rms_norm_last_dim_backward", Backward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 1, -1, "the forward input">,
    FusedOperand<"g", FuelAnyFloat, 1, -1, "upstream gradient, shaped like x">
  ];
  let results = [FusedResult<"dx">];
  let params = [EpsParam<>];
  let rule = "sameShapePair";
  let recipe = "rmsNormLastDimBackward";
  let schedule = "RowWise";
  let summary = "gradient of rms_norm_last_dim";
  let description = "With `ms = mean(x^2)` and `r = 1/sqrt(ms+eps)`: "
    "`dx = r * (g - x * sum(g*x) / (n * (ms + eps)))`, n the last-dim size.";
  let reference = "numpy (analytic) and finite differences";
}

def Fused_ReduceMaxToBackward : FusedOp<10, "reduce_max_to_backward", Backward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 0, -1, "the forward input">,
    FusedOperand<"g", FuelAnyFloat, 0, -1,
                 "upstream gradient: x's rank, size 1 in each reduced dim">
  ];
  let results = [FusedResult<"dx">];
  let rule = "reduceMaxToBackward";
  let decomposition = "reduceMaxToBackward";
  let schedule = "RowWise";
  let recipeNote = "decompose-only: which dims are reduced depends on the shapes, which a recipe cannot express";
  let summary = "gradient of a max reduction to a target shape";
  let description = "`dx = (x == max) * g / count(x == max)` per reduced group: ties "
    "share the gradient equally, like `torch.amax`'s backward. The reduced dims are "
    "those where g has size 1 and x does not.";
  let reference = "torch.amax backward";
}

def Fused_ConvTranspose2d : FusedOp<11, "conv_transpose_2d", Forward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 4, 4, "[B, C, H, W]">,
    FusedOperand<"w", FuelAnyFloat, 4, 4, "[C, F/groups, kh, kw]">
  ];
  let results = [FusedResult<"y", "[B, F, Ho, Wo]">];
  let params = [
    DefaultParam<"stride", FuelParamPair, "[1, 1]", [PairAtLeastOne]>,
    DefaultParam<"padding", FuelParamPair, "[0, 0]", [PairNonNegative]>,
    DefaultParam<"output_padding", FuelParamPair, "[0, 0]", [PairNonNegative],
                 "smaller than stride or dilation, per dim">,
    DefaultParam<"dilation", FuelParamPair, "[1, 1]", [PairAtLeastOne]>,
    DefaultParam<"groups", FuelParamI64, "1", [AtLeastOne], "divides C">
  ];
  let backward = Decompose;
  let rule = "convTranspose2d";
  let decomposition = "convTranspose2d";
  let schedule = "Convolution";
  let recipeNote = "decompose-only: needs strided insertion and kernel flips, which the recipe vocabulary lacks";
  let summary = "2-D transposed convolution, no bias";
  let description = "PyTorch `conv_transpose2d`: "
    "`Ho = (H - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + "
    "output_padding[0] + 1`, likewise `Wo`.";
  let reference = "torch.nn.functional.conv_transpose2d";
}

def Fused_FlashAttn : FusedOp<12, "flash_attn", Attention> {
  let operands = [
    FusedOperand<"q", FuelAnyFloat, 4, 4, "[B, Hq, Sq, D]">,
    FusedOperand<"k", FuelAnyFloat, 4, 4, "[B, Hkv, Sk, D], Hq a multiple of Hkv">,
    FusedOperand<"v", FuelAnyFloat, 4, 4, "[B, Hkv, Sk, Dv]">,
    OptionalOperand<"alibi", FuelF32, 1, 2, "slopes [Hq] or [B, Hq]">,
    OptionalOperand<"k_len", FuelIndex, 0, 0,
                    "attended keys: K/V are a capacity buffer, the first k_len are live">
  ];
  let results = [FusedResult<"o", "[B, Hq, Sq, Dv]">];
  let params = AttnParamList.params;
  let backward = FusedGrad<["flash_attn_backward_q", "flash_attn_backward_k",
                            "flash_attn_backward_v"]>;
  let rule = "flashAttn";
  let recipe = "flashAttn";
  let decomposition = "flashAttn";
  let schedule = "Attention";
  let recipeNote = "the recipe covers as many kv heads as query heads, causal or not, "
    "with no window, softcap, alibi or k_len; the rest is decomposed by hand";
  let summary = "scaled dot-product attention (FlashAttention-2 semantics)";
  let description = "`o = softmax(mask(softcap(scale * q @ k^T) + alibi_bias)) @ v` "
    "with grouped-query heads, the bottom-right aligned causal mask and windows "
    "(`j <= i + Sk - Sq`, `i + Sk - Sq - wl <= j <= i + Sk - Sq + wr`), "
    "`bias = -slope * |i + Sk - Sq - j|`. A fully masked row yields 0.";
  let reference = "torch.nn.functional.scaled_dot_product_attention; numpy";
}

def Fused_PagedAttn : FusedOp<13, "paged_attn", Attention> {
  let operands = [
    FusedOperand<"q", FuelAnyFloat, 3, 3, "[S, Hq, D]">,
    FusedOperand<"k_cache", FuelAnyFloat, 4, 4, "[num_blocks, Hkv, block_size, D]">,
    FusedOperand<"v_cache", FuelAnyFloat, 4, 4, "[num_blocks, Hkv, block_size, D]">,
    FusedOperand<"block_table", FuelInt32, 2, 2, "[S, max_blocks]">,
    FusedOperand<"context_lens", FuelInt32, 1, 1, "[S]">,
    OptionalOperand<"alibi", FuelF32, 1, 1, "slopes [Hq]">
  ];
  let results = [FusedResult<"o", "[S, Hq, D]">];
  let params = [
    RequiredParam<"softmax_scale", FuelParamF32, [Positive, FiniteFloat]>,
    RequiredParam<"block_size", FuelParamI64, [AtLeastOne],
                  "tokens per cache block (k_cache dim 2)">,
    OptionalParam<"softcap", FuelParamF32, [Positive, FiniteFloat]>
  ];
  let rule = "pagedAttn";
  let decomposition = "pagedAttn";
  let schedule = "Attention";
  let recipeNote = "decompose-only: gathers through the block table";
  let summary = "decode attention over a paged KV cache (vLLM)";
  let description = "One query token per sequence; sequence s attends its first "
    "`context_lens[s]` tokens, token t living in block `block_table[s, t / block_size]` "
    "at slot `t % block_size`. Scale, softcap, alibi and GQA as in flash_attn.";
  let reference = "numpy";
}

def Fused_QMatmul : FusedOp<14, "qmatmul", Quantized> {
  let operands = [
    FusedOperand<"a", FuelAnyFloat, 2, -1, "[..., M, K]">,
    FusedOperand<"w_q", FuelInt32, 1, 1,
                 "u32 words of the GGML block stream of N rows of K values">
  ];
  let results = [FusedResult<"c", "[..., M, N]">];
  let params = [
    RequiredParam<"quant_type", FuelParamQuantType>,
    RequiredParam<"k", FuelParamI64, [AtLeastOne], "K, a multiple of the block size">,
    RequiredParam<"n", FuelParamI64, [AtLeastOne], "N">
  ];
  let rule = "qmatmul";
  let decomposition = "qmatmul";
  let schedule = "Quantized";
  let recipeNote = "decompose-only: decoding GGML block streams needs bit-level gathers";
  let summary = "matmul with a GGML-quantized weight";
  let description = "`C[m, n] = sum_k A[m, k] * dequant(W)[n, k]`; w_q holds "
    "`ceil(N * K / block_size * block_bytes / 4)` words, zero-padded.";
  let reference = "gguf.quants.dequantize";
}

def Fused_PowiBackward : FusedOp<15, "powi_backward", Backward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 0, -1, "the forward input">,
    FusedOperand<"g", FuelAnyFloat, 0, -1, "upstream gradient, shaped like x">
  ];
  let results = [FusedResult<"dx">];
  let params = [RequiredParam<"exp", FuelParamI32, [], "the forward exponent">];
  let rule = "sameShapePair";
  let recipe = "powiBackward";
  let recipeNote = "fuel-fuse does not search for it: its structure depends on the "
                   "integer exp, and exp * x^(exp - 1) * g for exp = 1 or 2 is any "
                   "product of two tensors and a constant";
  let summary = "gradient of x^exp";
  let description = "`dx = exp * x^(exp-1) * g` (exp = 0 gives 0).";
  let reference = "numpy (analytic)";
}

def Fused_InplaceAffine : FusedOp<16, "inplace_affine", Forward> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 0, -1,
                               "a tensor, or a memref written in place">];
  let results = [FusedResult<"y", "on tensors only; none on memrefs">];
  let params = [
    RequiredParam<"mul", FuelParamF64>,
    RequiredParam<"add", FuelParamF64>
  ];
  let destructiveInput = 0;
  let rule = "inplaceAffine";
  let recipe = "inplaceAffine";
  let schedule = "RowWise";
  let summary = "x <- mul * x + add";
  let description = "On tensors a pure op returning the new value; on memrefs it "
    "writes into operand 0 and has no result. It must not be CSE'd or hoisted past "
    "readers of x.";
  let reference = "numpy";
}

def Fused_FusedSoftmaxCrossEntropy
    : FusedOp<17, "fused_softmax_cross_entropy", Forward> {
  let operands = [
    FusedOperand<"logits", FuelAnyFloat, 1, -1, "[..., V]">,
    FusedOperand<"targets", FuelInt64, 0, -1, "[...] class indices">
  ];
  let results = [FusedResult<"loss", "f32: [] for mean/sum, targets' shape for none">];
  let params = [
    DefaultParam<"reduction", FuelParamReduction, "mean">,
    DefaultParam<"ignore_index", FuelParamI64, "-100">
  ];
  let backward = Decompose;
  let rule = "crossEntropy";
  let recipe = "softmaxCrossEntropy";
  let schedule = "RowLoss";
  let summary = "softmax cross-entropy over the last dim";
  let description = "PyTorch `F.cross_entropy(logits, targets, reduction, ignore_index)`; "
    "mean divides by the number of non-ignored targets (none: NaN).";
  let reference = "torch.nn.functional.cross_entropy";
}

def Fused_CausalConv1d : FusedOp<18, "causal_conv1d", Forward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 3, 3, "[B, C, S + K - 1], left-padded by the caller">,
    FusedOperand<"w", FuelAnyFloat, 3, 3, "[C, 1, K]">,
    FusedOperand<"bias", FuelAnyFloat, 1, 1, "[C]">
  ];
  let results = [FusedResult<"y", "[B, C, S]">];
  let params = [DefaultParam<"use_silu", FuelParamBool, "false">];
  let rule = "causalConv1d";
  let decomposition = "causalConv1d";
  let schedule = "Convolution";
  let recipeNote = "decompose-only: no recipe yet; frontends write it as a grouped "
                   "convolution over padding on both sides and a slice of its output, "
                   "which the matcher does not read";
  let summary = "depthwise causal conv1d, optional SiLU";
  let description = "`y[b,c,t] = bias[c] + sum_j w[c,0,j] * x[b,c,t+j]`, then SiLU if "
    "use_silu.";
  let reference = "torch.nn.functional.conv1d(groups=C)";
}

def Fused_SelectiveScan : FusedOp<19, "selective_scan", Forward> {
  let operands = [
    FusedOperand<"u", FuelAnyFloat, 3, 3, "[B, L, D]">,
    FusedOperand<"delta", FuelAnyFloat, 3, 3, "[B, L, D]">,
    FusedOperand<"a", FuelAnyFloat, 2, 2, "[D, N]">,
    FusedOperand<"b", FuelAnyFloat, 3, 3, "[B, L, N]">,
    FusedOperand<"c", FuelAnyFloat, 3, 3, "[B, L, N]">
  ];
  let results = [FusedResult<"y", "[B, L, D]">,
                 FusedResult<"last_state", "[B, D, N]">];
  let params = [DefaultParam<"delta_softplus", FuelParamBool, "false">];
  let rule = "selectiveScan";
  let decomposition = "selectiveScan";
  let schedule = "Scan";
  let recipeNote = "decompose-only: a recurrence along the sequence needs a scan primitive";
  let summary = "Mamba-1 selective scan";
  let description = "`dt = softplus(delta)` if delta_softplus; "
    "`h_t = exp(dt_t * a) * h_{t-1} + (dt_t * u_t) * b_t` (h `[B, D, N]`, h_0 = 0), "
    "`y_t = sum_n h_t * c_t`; results y and the last state.";
  let reference = "numpy (sequential scan)";
}

def Fused_SsdChunkScan : FusedOp<20, "ssd_chunk_scan", Forward> {
  let operands = [
    FusedOperand<"x", FuelAnyFloat, 4, 4, "[B, L, H, P]">,
    FusedOperand<"dt", FuelAnyFloat, 3, 3, "[B, L, H]">,
    FusedOperand<"a", FuelAnyFloat, 1, 1, "[H]">,
    FusedOperand<"b", FuelAnyFloat, 4, 4, "[B, L, H, N]">,
    FusedOperand<"c", FuelAnyFloat, 4, 4, "[B, L, H, N]">
  ];
  let results = [FusedResult<"y", "[B, L, H, P]">];
  let params = [RequiredParam<"chunk_size", FuelParamI64, [AtLeastOne],
                              "divides L; changes the blocking, never the result">];
  let rule = "ssdChunkScan";
  let decomposition = "ssdChunkScan";
  let schedule = "Scan";
  let recipeNote = "decompose-only: a recurrence along the sequence needs a scan primitive";
  let summary = "Mamba-2 SSD chunked scan";
  let description = "`h_t = exp(dt_t * a) * h_{t-1} + dt_t * x_t (outer) b_t` "
    "(h `[B, H, P, N]`), `y_t = h_t @ c_t`.";
  let reference = "numpy (sequential scan)";
}

def Fused_Nf4Matmul : FusedOp<21, "nf4_matmul", Quantized> {
  let operands = [
    FusedOperand<"act", FuelAnyFloat, 2, -1, "[..., M, K], K even">,
    FusedOperand<"w_packed", FuelInt8, 2, 2, "[N, K/2], high nibble first">,
    FusedOperand<"absmax", FuelF32, 2, 2, "[N, K/block_size]">
  ];
  let results = [FusedResult<"c", "[..., M, N]">];
  let params = [DefaultParam<"block_size", FuelParamI64, "64", [AtLeastOne],
                             "divides K">];
  let rule = "nf4Matmul";
  let decomposition = "nf4Matmul";
  let schedule = "Quantized";
  let recipeNote = "decompose-only: a code-book lookup on packed nibbles has no recipe primitive";
  let summary = "matmul with a bitsandbytes NF4 weight";
  let description = "`W[n, k] = NF4[code] * absmax[n, k / block_size]`, "
    "`C = act @ W^T`; byte `w_packed[n, k/2]` holds element k (even) in its high "
    "nibble.";
  let reference = "bitsandbytes' NF4 table";
}

def Fused_FlashAttnBackwardQ
    : AttnBackwardOp<22, "flash_attn_backward_q", "q", "dq">;
def Fused_FlashAttnBackwardK
    : AttnBackwardOp<23, "flash_attn_backward_k", "k", "dk">;
def Fused_FlashAttnBackwardV
    : AttnBackwardOp<24, "flash_attn_backward_v", "v", "dv">;

def Fused_AwqMatmul : FusedOp<25, "awq_matmul", Quantized> {
  let operands = [
    FusedOperand<"act", FuelAnyFloat, 2, -1, "[..., M, K]">,
    FusedOperand<"qweight", FuelInt32, 2, 2, "[K, N/8], AWQ nibble order">,
    FusedOperand<"qzeros", FuelInt32, 2, 2, "[K/group_size, N/8]">,
    FusedOperand<"scales", FuelAnyFloat, 2, 2, "[K/group_size, N]">
  ];
  let results = [FusedResult<"c", "[..., M, N]">];
  let params = [
    DefaultParam<"group_size", FuelParamI64, "128", [GroupSize64Or128],
                 "divides K">,
    DefaultParam<"split_k_iters", FuelParamI32, "8", [AtLeastOne],
                 "GPU kernel tuning only">
  ];
  let rule = "awqMatmul";
  let decomposition = "awqMatmul";
  let schedule = "Quantized";
  let recipeNote = "decompose-only: unpacking nibbles in AWQ order has no recipe primitive";
  let summary = "matmul with an AutoAWQ (GEMM format) int4 weight";
  let description = "`W[k, n] = (q[k, n] - z[k / group_size, n]) * "
    "scales[k / group_size, n]`, `C = act @ W`; eight nibbles per u32 word along N "
    "in the order [0, 2, 4, 6, 1, 3, 5, 7].";
  let reference = "AutoAWQ awq/utils/packing_utils.py";
}

#endif // FUEL_FUSEDOPS_TD
