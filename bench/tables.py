"""The README's benchmark tables, in Markdown, from the JSON files the
benches write (so that a table shows one run, and says which):

    python bench/tables.py [--rows bench/row_ops.json] [--linear ...]
                           [--attention ...] [--qmatmul ...] [--all ...]

Prints each table under a heading naming its file; medians in ms.
"""

import argparse
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parent

ROW_NAMES = {"softmax_last_dim": "softmax", "rms_norm_last_dim": "RMS norm",
             "layer_norm_last_dim": "layer norm"}


def load(path):
    return json.loads(Path(path).read_text())


def ms(entry, who, digits=2):
    value = entry["ms"].get(who)
    return "-" if value is None else f"{value['median']:.{digits}f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def row_ops(results):
    who = ["fuel out=", "fuel", "fuel 2 threads out=", "fuel scalar", "numpy",
           "torch 1 thread", "torch 2 threads", "copy of the input"]
    rows = []
    for r in results:
        name = f"{ROW_NAMES.get(r['op'], r['op'])} [{', '.join(map(str, r['shape']))}]"
        torch1 = r["ms"].get("torch 1 thread")
        ratio = (f"{torch1['median'] / r['ms']['fuel out=']['median']:.2f}"
                 if torch1 else "-")
        rows.append([name] + [ms(r, w) for w in who] + [ratio])
    return table(["op, shape", "fuel `out=`", "fuel", "fuel, 2 threads, `out=`",
                  "fuel scalar", "numpy", "torch 1 thread", "torch 2 threads", "copy",
                  "torch 1 thread / fuel `out=`"], rows)


def gflops(r, flops):
    return f"{ms(r, 'fuel out=')} ms, {flops / r['ms']['fuel out=']['median'] / 1e6:.0f} GFLOP/s"


def linear(results):
    rows = []
    for r in results:
        m, k, n = r["size"]
        flops = 2 * m * k * n
        t1 = r["ms"]["torch 1 thread"]["median"]
        rows.append([f"{m} x {k} x {n}", gflops(r, flops), ms(r, "fuel 2 threads out="),
                     ms(r, "numpy"), f"{t1:.2f} ({flops / t1 / 1e6:.0f} GFLOP/s)",
                     ms(r, "torch 2 threads")])
    return table(["M x K x N", "fuel `out=`", "fuel, 2 threads", "numpy (OpenBLAS)",
                  "torch 1 thread", "torch 2 threads"], rows)


def attention(results):
    rows = []
    for r in results:
        if "ms" not in r:
            continue
        b, h, s, d = r["shape"]
        causal = "causal" in r["op"]
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        rows.append([f"{'causal' if causal else 'full'} [{b}, {h}, {s}, {d}]",
                     gflops(r, flops), ms(r, "fuel 2 threads out="), ms(r, "numpy"),
                     ms(r, "torch 1 thread"), ms(r, "torch 2 threads")])
    return table(["attention", "fuel `out=`", "fuel, 2 threads", "numpy (full scores)",
                  "torch SDPA 1 thread", "torch SDPA 2 threads"], rows)


def qmatmul(results):
    rows = []
    for r in results:
        m, k, n = r["shape"]
        qtype = r["op"].split()[-1].upper()
        fuel = r["ms"]["fuel out="]["median"]
        first = f"{fuel:.2f} ms" if m == 1 else gflops(r, 2 * m * k * n)
        torch1 = r["ms"].get("torch 1 thread")
        rows.append([f"{qtype}, M = {m}", first, ms(r, "fuel 2 threads out="),
                     ms(r, "numpy dequantize + matmul", 1), ms(r, "numpy"),
                     ms(r, "torch 1 thread"), ms(r, "torch 2 threads"),
                     f"{torch1['median'] / fuel:.2f}" if torch1 else "-"])
    return table([f"qmatmul, K = N = {results[0]['shape'][1]}", "fuel `out=`",
                  "fuel, 2 threads", "gguf dequantize + numpy", "numpy (f32 weight)",
                  "torch 1 thread (f32 weight)", "torch 2 threads", "torch 1 thread / fuel"],
                 rows)


def all_ops(results):
    rows = []
    for r in results:
        shapes = " ".join("x".join(map(str, s)) for s in r["shapes"][:2])
        ratio = r["ratio_to_fuel"]
        rows.append([f"`{r['op']}`", shapes, f"{r['median_ms']['fuel']:.2f}",
                     f"{ratio['numpy']:.2f}" if "numpy" in ratio else "-",
                     f"{ratio['torch 1 thread']:.2f}" if "torch 1 thread" in ratio else "-"])
    return table(["op", "shapes", "fuel ms", "numpy / fuel", "torch 1 thread / fuel"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=BENCH / "row_ops.json")
    parser.add_argument("--linear", default=BENCH / "linear.json")
    parser.add_argument("--attention", default=BENCH / "attention.json")
    parser.add_argument("--qmatmul", default=BENCH / "qmatmul.json")
    parser.add_argument("--all", default=BENCH / "all_ops.json")
    args = parser.parse_args()
    for title, path, render in [("row ops", args.rows, row_ops),
                                ("fused_linear", args.linear, linear),
                                ("attention", args.attention, attention),
                                ("qmatmul", args.qmatmul, qmatmul),
                                ("all ops", args.all, all_ops)]:
        if Path(path).is_file():
            print(f"{title} ({Path(path).name}):\n\n{render(load(path))}\n")


if __name__ == "__main__":
    main()
