"""--fuel-fuse does work proportional to the module: on a chain of N layers
(RMS norm, fused_linear, softmax, layer norm) in their decomposed normal
form, the pass's own counters (--mlir-pass-statistics: candidate roots
tried, recipe matches attempted, fused ops made) are exactly proportional
to N, from 25 layers (~2,900 ops) to 1,000 (~115,000 ops), and every layer's
four ops are found. (Counts of work, not timings; bench/fuse_scaling.py
times it.)"""

import re
import subprocess

T = "tensor<4x64xf32>"


def layers(n):
    lines = [f"func.func @f(%x0: {T}, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> {T} {{"]
    for i in range(n):
        lines += [
            f"  %n{i} = fuel.fused rms_norm_last_dim {{eps = 1.0e-05 : f64}} (%x{i}) : ({T}) -> {T}",
            f"  %l{i} = fuel.fused fused_linear (%n{i}, %w, %b) : ({T}, tensor<64x64xf32>, tensor<64xf32>) -> {T}",
            f"  %s{i} = fuel.fused softmax_last_dim (%l{i}) : ({T}) -> {T}",
            f"  %x{i + 1} = fuel.fused layer_norm_last_dim {{eps = 1.0e-05 : f64}} (%s{i}) : ({T}) -> {T}",
        ]
    lines += [f"  return %x{n} : {T}", "}"]
    return "\n".join(lines) + "\n"


def fuse_counters(fuel_opt, n):
    decomposed = subprocess.run([fuel_opt, "--fuel-decompose"], input=layers(n),
                                capture_output=True, text=True, check=True).stdout
    assert "fuel.fused" not in decomposed
    run = subprocess.run([fuel_opt, "--fuel-fuse", "--mlir-pass-statistics",
                          "--mlir-pass-statistics-display=list"],
                         input=decomposed, capture_output=True, text=True, check=True)
    counters = {name: int(value) for value, name in
                re.findall(r"\(S\)\s+(\d+)\s+(\w+)", run.stderr)}
    ops = len(re.findall(r"^\s*(?:%\S+ = )?[a-z_]+\.[a-z_.]+", decomposed, re.M))
    return counters, ops, run.stdout


def test_fuse_work_is_linear(fuel_opt):
    small, small_ops, _ = fuse_counters(fuel_opt, 25)
    big, big_ops, fused = fuse_counters(fuel_opt, 1000)
    assert big_ops > 100_000
    assert set(small) == {"roots", "attempts", "fused"}
    for name in small:
        assert big[name] == 40 * small[name], (name, small[name], big[name])
    assert big["fused"] == 4 * 1000
    assert fused.count("fuel.fused") == 4 * 1000
