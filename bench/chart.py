"""Draws bench/cpu.png from the JSON that bench/row_ops.py,
bench/linear.py, bench/attention.py and bench/qmatmul.py write: per op and shape, each contender's median time as a
multiple of PyTorch's on one thread (lower is faster; the line at 1 is
PyTorch). Needs matplotlib (not a dependency of the package).

    python bench/chart.py [--rows bench/row_ops.json] [--linear bench/linear.json]
                          [--attention bench/attention.json]
                          [--qmatmul bench/qmatmul.json] [--out bench/cpu.png]
"""

import argparse
import json

CONTENDERS = ["fuel out=", "fuel 2 threads out=", "numpy", "torch 2 threads", "copy of the input"]
SHORT = {"softmax_last_dim": "softmax", "rms_norm_last_dim": "RMS norm",
         "layer_norm_last_dim": "layer norm", "fused_linear": "linear",
         "flash_attn causal": "causal attention", "flash_attn": "attention",
         "qmatmul q8_0": "qmatmul Q8_0", "qmatmul q4_0": "qmatmul Q4_0"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="bench/row_ops.json")
    parser.add_argument("--linear", default="bench/linear.json")
    parser.add_argument("--attention", default="bench/attention.json")
    parser.add_argument("--qmatmul", default="bench/qmatmul.json")
    parser.add_argument("--out", default="bench/cpu.png")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for path in (args.rows, args.linear, args.attention, args.qmatmul):
        with open(path) as f:
            rows += json.load(f)
    labels, series = [], {c: [] for c in CONTENDERS}
    for row in rows:
        torch1 = row.get("ms", {}).get("torch 1 thread", {}).get("median")
        if not torch1:
            continue
        dims = row.get("shape") or row.get("size")
        labels.append(SHORT.get(row["op"], row["op"]) + "\n" + "x".join(map(str, dims)))
        for c in CONTENDERS:
            series[c].append(row["ms"][c]["median"] / torch1 if c in row["ms"] else float("nan"))
    width = 0.8 / len(CONTENDERS)
    fig, ax = plt.subplots(figsize=(1.3 * len(labels) + 2, 4.5))
    for i, c in enumerate(CONTENDERS):
        xs = [j + (i - (len(CONTENDERS) - 1) / 2) * width for j in range(len(labels))]
        ax.bar(xs, series[c], width, label=c)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("median time / PyTorch 1 thread (lower is faster)")
    ax.set_title("fuel-mlir on the CPU, f32, 2 cores")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
