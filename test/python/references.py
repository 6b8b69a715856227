"""Numpy references written from docs/FusedOps.md (never from the code under
test), in float64."""

import numpy as np


def conv2d(x, w, b, stride, padding, groups):
    B, C, H, W = x.shape
    F, Cg, KH, KW = w.shape
    (s0, s1), (p0, p1) = stride, padding
    xp = np.pad(x, ((0, 0), (0, 0), (p0, p0), (p1, p1)))
    Ho, Wo = (H + 2 * p0 - KH) // s0 + 1, (W + 2 * p1 - KW) // s1 + 1
    out = np.zeros((B, F, Ho, Wo))
    Fg = F // groups
    for f in range(F):
        g = f // Fg
        xs = xp[:, g * Cg:(g + 1) * Cg]
        for i in range(KH):
            for j in range(KW):
                patch = xs[:, :, i:i + s0 * (Ho - 1) + 1:s0, j:j + s1 * (Wo - 1) + 1:s1]
                out[:, f] += np.einsum("bchw,c->bhw", patch, w[f, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def conv_transpose2d(x, w, stride, padding, output_padding, dilation, groups):
    """The scatter definition: every input pixel adds its kernel-weighted
    footprint to the output, then `padding` is cropped from each side."""
    B, C, H, W = x.shape
    _, Fg, KH, KW = w.shape
    F, Cg = Fg * groups, C // groups
    (s0, s1), (p0, p1), (o0, o1), (d0, d1) = stride, padding, output_padding, dilation
    Ho = (H - 1) * s0 - 2 * p0 + d0 * (KH - 1) + o0 + 1
    Wo = (W - 1) * s1 - 2 * p1 + d1 * (KW - 1) + o1 + 1
    full = np.zeros((B, F, max((H - 1) * s0 + d0 * (KH - 1) + 1, p0 + Ho),
                     max((W - 1) * s1 + d1 * (KW - 1) + 1, p1 + Wo)))
    for c in range(C):
        g = c // Cg
        for fo in range(Fg):
            f = g * Fg + fo
            for i in range(KH):
                for j in range(KW):
                    full[:, f, i * d0:i * d0 + (H - 1) * s0 + 1:s0,
                         j * d1:j * d1 + (W - 1) * s1 + 1:s1] += x[:, c] * w[c, fo, i, j]
    return full[:, :, p0:p0 + Ho, p1:p1 + Wo]


def causal_conv1d(x, w, b, use_silu):
    B, C, L = x.shape
    K = w.shape[2]
    out = np.zeros((B, C, L - K + 1)) + b[None, :, None]
    for j in range(K):
        out += w[None, :, 0, j, None] * x[:, :, j:j + L - K + 1]
    return out / (1 + np.exp(-out)) if use_silu else out


def cross_entropy(logits, targets, reduction="mean", ignore_index=-100):
    lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    valid = targets != ignore_index
    safe = np.where(valid, targets, 0)
    picked = np.take_along_axis(logits, safe[..., None], -1)[..., 0]
    loss = np.where(valid, lse - picked, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return loss.sum() / valid.sum()


def reduce_max_backward(x, g):
    axes = tuple(i for i in range(x.ndim) if g.shape[i] == 1 and x.shape[i] != 1)
    m = x.max(axis=axes, keepdims=True)
    eq = x == m
    return eq * g / eq.sum(axis=axes, keepdims=True)


def flash_attn(q, k, v, scale, causal=False, window_left=None, window_right=None,
               softcap=None, alibi=None, k_len=None):
    B, Hq, Sq, D = q.shape
    r = Hq // k.shape[1]
    kk, vv = np.repeat(k, r, axis=1), np.repeat(v, r, axis=1)
    s = scale * q @ kk.transpose(0, 1, 3, 2)
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    Sk = k.shape[2]
    kl = Sk if k_len is None else k_len
    i, j = np.arange(Sq)[:, None], np.arange(Sk)[None, :]
    off = kl - Sq
    if alibi is not None:
        slope = alibi[None, :, None, None] if alibi.ndim == 1 else alibi[:, :, None, None]
        s = s - slope * np.abs(i + off - j)
    mask = j < kl
    if causal:
        mask = mask & (j <= i + off)
    if window_left is not None:
        mask = mask & (j >= i + off - window_left)
    if window_right is not None:
        mask = mask & (j <= i + off + window_right)
    mask = np.broadcast_to(mask, s.shape)
    s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.where(mask, np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
    l = e.sum(-1, keepdims=True)
    p = np.where(l > 0, e / np.where(l > 0, l, 1), 0.0)
    return p @ vv


def flash_attn_grads(q, k, v, do, scale, causal=False, window_left=None, window_right=None,
                     softcap=None, alibi=None):
    """(dq, dk, dv) of flash_attn for the upstream gradient do, written
    from the math in docs/FusedOps.md: p = softmax(s), dp = do v^T,
    ds = p * (dp - rowsum(p * dp)), through the softcap (1 - tanh^2) and
    the scale; dq = ds k, dk = ds^T q, dv = p^T do, summed over the query
    heads of each kv head."""
    B, Hq, Sq, D = q.shape
    Hkv, Sk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    kk, vv = np.repeat(k, r, axis=1), np.repeat(v, r, axis=1)
    x = scale * q @ kk.transpose(0, 1, 3, 2)
    t = np.tanh(x / softcap) if softcap is not None else None
    s = softcap * t if softcap is not None else x
    i, j = np.arange(Sq)[:, None], np.arange(Sk)[None, :]
    off = Sk - Sq
    if alibi is not None:
        slope = alibi[None, :, None, None] if alibi.ndim == 1 else alibi[:, :, None, None]
        s = s - slope * np.abs(i + off - j)
    mask = np.ones((Sq, Sk), bool)
    if causal:
        mask &= j <= i + off
    if window_left is not None:
        mask &= j >= i + off - window_left
    if window_right is not None:
        mask &= j <= i + off + window_right
    mask = np.broadcast_to(mask, s.shape)
    s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.where(mask, np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
    l = e.sum(-1, keepdims=True)
    p = np.where(l > 0, e / np.where(l > 0, l, 1), 0.0)
    dp = do @ vv.transpose(0, 1, 3, 2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    if softcap is not None:
        ds = ds * (1 - t * t)
    ds = ds * scale
    dq = ds @ kk
    dk = (ds.transpose(0, 1, 3, 2) @ q).reshape(B, Hkv, r, Sk, D).sum(2)
    dv = (p.transpose(0, 1, 3, 2) @ do).reshape(B, Hkv, r, Sk, v.shape[3]).sum(2)
    return dq, dk, dv


def paged_attn(q, k_cache, v_cache, block_table, context_lens, scale, block_size,
               softcap=None, alibi=None):
    S, Hq, D = q.shape
    out = np.zeros((S, Hq, v_cache.shape[3]))
    for s in range(S):
        n = int(context_lens[s])
        if n == 0:
            continue
        t = np.arange(n)
        blocks = block_table[s, t // block_size]
        k = k_cache[blocks, :, t % block_size, :].transpose(1, 0, 2)[None]  # [1,Hkv,n,D]
        v = v_cache[blocks, :, t % block_size, :].transpose(1, 0, 2)[None]
        out[s] = flash_attn(q[s][None, :, None, :], k, v, scale, softcap=softcap,
                            alibi=alibi)[0, :, 0, :]
    return out


def grad(f, x, h=1e-6):
    """Central finite differences of the scalar f at x."""
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return out


# bitsandbytes' published NF4 code book (bitsandbytes/functional.py).
NF4 = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=np.float32)


def nf4_pack(codes):
    """[N, K] codes in 0..15 -> [N, K/2] bytes, element k (even) in the high
    nibble, as bitsandbytes packs them."""
    return ((codes[:, 0::2] << 4) | codes[:, 1::2]).astype(np.uint8)


def nf4_dequant(codes, absmax, block_size):
    return NF4[codes].astype(np.float64) * np.repeat(absmax, block_size, axis=1)


# AutoAWQ's pack order (awq/utils/packing_utils.py).
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def awq_pack(values):
    """[R, N] ints in 0..15 -> [R, N/8] u32 words, packed as AutoAWQ's GEMM
    format does: nibble i of word c holds column 8c + AWQ_ORDER[i]."""
    R, N = values.shape
    out = np.zeros((R, N // 8), dtype=np.uint32)
    for c in range(N // 8):
        for i in range(8):
            out[:, c] |= values[:, 8 * c + AWQ_ORDER[i]].astype(np.uint32) << np.uint32(4 * i)
    return out


def softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def selective_scan(u, delta, a, b, c, delta_softplus):
    B, L, D = u.shape
    N = a.shape[1]
    dt = softplus(delta) if delta_softplus else delta
    h = np.zeros((B, D, N))
    y = np.zeros((B, L, D))
    for t in range(L):
        h = np.exp(dt[:, t, :, None] * a[None]) * h + (dt[:, t] * u[:, t])[:, :, None] * b[:, t, None, :]
        y[:, t] = (h * c[:, t, None, :]).sum(-1)
    return y, h


def ssd_scan(x, dt, a, b, c):
    B, L, H, P = x.shape
    N = b.shape[-1]
    h = np.zeros((B, H, P, N))
    y = np.zeros((B, L, H, P))
    for t in range(L):
        decay = np.exp(dt[:, t] * a[None])[:, :, None, None]
        h = decay * h + (dt[:, t, :, None] * x[:, t])[..., None] * b[:, t, :, None, :]
        y[:, t] = (h * c[:, t, :, None, :]).sum(-1)
    return y


# Row ops: softmax, RMS and layer norm over the last dim, and their backwards.

def ref_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def ref_rms(x, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def ref_layer(x, eps):
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps)


def ref_softmax_bwd(y, g):
    return y * (g - (g * y).sum(-1, keepdims=True))


def ref_layer_bwd(x, g, eps):
    c = x - x.mean(-1, keepdims=True)
    r = 1 / np.sqrt((c * c).mean(-1, keepdims=True) + eps)
    xh = c * r
    return r * (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True))


def ref_rms_bwd(x, g, eps):
    n = x.shape[-1]
    ms = (x * x).mean(-1, keepdims=True)
    r = 1 / np.sqrt(ms + eps)
    return r * (g - x * (g * x).sum(-1, keepdims=True) / (n * (ms + eps)))
