"""Every op on an NVIDIA GPU, side by side with PyTorch CUDA: each op of
bench/all_ops.py compiled with `runner.compile(..., target="cuda")`, its
result checked against the float64 numpy reference first, then timed
interleaved with PyTorch on the GPU where it has the op (softmax, the
norms, SDPA for attention, cuBLAS for fused_linear), and two shapes
besides (bench/gpu_cases.py): flash_attn decoding (one query against
4,096 keys: the split-keys form) and fused_linear at 2048 x 2048 x 2048
(the 128 x 128 block tiles; cuBLAS in f32, PyTorch's default, not TF32).
fuel-mlir's run API copies the inputs to the device and the results back
on every call, so PyTorch is timed both ways: on device-resident
tensors, and with the same copies (`torch + copies`).

    python bench/gpu.py [--ops softmax_last_dim ...] [--rounds 20] [--json out.json]

Without a GPU it says why and points to the static figures
(`python bench/gpu_static.py`: registers, shared memory, occupancy; and
`--emulator --memory-profile`, below).
With `--emulator` it needs no GPU and times nothing: each case's kernels,
as fuel-to-nvvm makes them for an H100, run on the CPU (the GPU emulator,
`target="cuda-emulator"`) and their result is checked the same way, at
the bench's shapes (minutes: the emulator is a checker); `--emulator=rocm`
does the same with fuel-to-rocdl's kernels for an MI300X. With
`--memory-profile` besides, the emulator also counts each case's memory
requests (fuel_mlir.memory_profile, 8 blocks a launch): how much of the
device memory sectors moved the lanes asked for (loads, stores), and the
workgroup memory's bank conflicts (wavefronts over the fewest possible);
`--json` saves them, per kernel.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python"))

from numerics import fused_text  # noqa: E402

from fuel_mlir import gpu, runner  # noqa: E402

from all_ops import to_np  # noqa: E402
from gpu_cases import gpu_bench_cases  # noqa: E402
from harness import time_interleaved  # noqa: E402


def on_device(torch_f, torch, inputs):
    """torch_f on device-resident copies of `inputs`, and with the copies in
    and out that fuel-mlir's run API makes on every call."""
    tensors = [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in inputs]

    def resident():
        out = torch_f(*tensors)
        torch.cuda.synchronize()
        return out

    def copying():
        return torch_f(*[torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in inputs]).cpu()

    return resident, copying


def check(name, f, inputs, np_f, where):
    """Runs `f` once and stops the bench if its result is off the float64
    reference (relative to the largest magnitude) by 1e-3 or more; returns
    that error (None without a reference)."""
    got = to_np(f(*inputs)).astype(np.float64)
    if np_f is None:
        return None
    want = to_np(np_f(*[i.astype(np.float64) if i.dtype == np.float32 else i for i in inputs]))
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    if not err < 1e-3:
        raise SystemExit(f"fuel-mlir computes {name} wrong {where}: relative error {err:.2e}")
    return err


def emulate(names, table, vendor, profile_memory=False, json_path=None):
    """Each case checked on the GPU emulator (no timing); with
    `profile_memory`, its kernels' memory requests counted too."""
    import contextlib
    import time

    from fuel_mlir import memory_profile

    print("the GPU emulator: the kernels of "
          + ("fuel-to-nvvm for an H100 (sm_90)" if vendor == "cuda"
             else "fuel-to-rocdl for an MI300X (gfx942)") + ", on the CPU")
    if profile_memory:
        print(f"{'':32s} {'':22s} {memory_profile.FIGURES_HEADER}")
    results = []
    for name in names:
        op, inputs, params, np_f, _ = table[name]
        start = time.perf_counter()
        f = runner.compile(fused_text(op, inputs, params), "f", target=f"{vendor}-emulator",
                           memory_profile=profile_memory)
        with (memory_profile.record(blocks=8) if profile_memory
              else contextlib.nullcontext()) as profile:
            err = check(name, f, inputs, np_f, "on the GPU emulator")
        said = "no reference" if err is None else f"relative error {err:.1e}"
        figures = ""
        if profile is not None:
            figures = memory_profile.figures(profile) + " "
            results.append({"op": name, "target": f"{vendor}-emulator", "kernels": [
                {"kernel": k.module, "launches": k.launches, "blocks": k.blocks,
                 "load_efficiency": k.efficiency("load"),
                 "store_efficiency": k.efficiency("store"),
                 "workgroup_load_conflicts": k.conflicts("load"),
                 "workgroup_store_conflicts": k.conflicts("store")}
                for k in profile.kernels]})
        print(f"{name:32s} {said:22s} {figures}({time.perf_counter() - start:.0f} s)",
              flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=1))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--ops", nargs="+", default=None)
    parser.add_argument("--json", default=None)
    parser.add_argument("--emulator", nargs="?", const="cuda", choices=("cuda", "rocm"),
                        help="check each case on the GPU emulator instead (no GPU, no timing): "
                             "the NVIDIA kernels (cuda, the default) or the AMD ones (rocm)")
    parser.add_argument("--memory-profile", action="store_true",
                        help="with --emulator: count each case's memory requests too "
                             "(coalescing, bank conflicts)")
    args = parser.parse_args()
    if args.memory_profile and not args.emulator:
        parser.error("--memory-profile needs --emulator")
    if args.emulator:
        table = gpu_bench_cases(None)
        return emulate(args.ops or sorted(table), table, args.emulator, args.memory_profile,
                       args.json)
    try:
        device = gpu.cuda_devices()[0]
    except gpu.NoDeviceError as e:
        print(f"no NVIDIA GPU here ({e}); the static figures: python bench/gpu_static.py "
              "(registers, shared memory, occupancy) and python bench/gpu.py --emulator "
              "--memory-profile (the kernels' memory requests: coalescing, bank conflicts)")
        return 0
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    print(f"{device.name} ({device.chip})")
    table = gpu_bench_cases(torch)
    results = []
    for name in args.ops or sorted(table):
        op, inputs, params, np_f, torch_f = table[name]
        f = runner.compile(fused_text(op, inputs, params), "f", target="cuda")
        check(name, f, inputs, np_f, "on the GPU")
        contenders = {"fuel (with copies)": lambda: f(*inputs)}
        if torch_f is not None:
            resident, copying = on_device(torch_f, torch, inputs)
            contenders["torch"] = resident
            contenders["torch + copies"] = copying
        times = time_interleaved(contenders, args.rounds, settle=0.0)
        med = {who: float(np.median(ts)) for who, ts in times.items()}
        base = med["fuel (with copies)"]
        print(f"{name:32s} " + "  ".join(f"{who} {ms:.3f} ms ({ms / base:.2f}x)" for who, ms in med.items()),
              flush=True)
        results.append({"op": name, "device": device.name, "median_ms": med})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
