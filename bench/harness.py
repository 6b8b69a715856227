"""What the benches share: PyTorch as a contender on one thread and two,
checking every contender against a float64 result, timing them
interleaved, round after round (a noisy machine slows them alike), and
reporting median, min and max ms, GFLOP/s and ratios."""

import resource
import time

import numpy as np


def torch_contenders(make):
    """{"torch 1 thread": ..., "torch 2 threads": ...}: the callable that
    `make(torch)` returns (it computes a tensor), on that many threads; {}
    where PyTorch is not installed."""
    try:
        import torch
    except ImportError:
        return {}
    call = make(torch)
    contenders = {}
    for threads in (1, 2):
        def run(threads=threads):
            torch.set_num_threads(threads)
            return call().numpy()
        contenders[f"torch {threads} thread" + ("s" if threads > 1 else "")] = run
    return contenders


def check_contenders(contenders, want, what, tolerance=1e-5):
    """Exits unless every contender's result is within `tolerance` of
    `want` (float64), relative to its largest magnitude."""
    for who, f in contenders.items():
        got = np.asarray(f(), dtype=np.float64)
        err = np.abs(got - want).max() / np.abs(want).max()
        if not err < tolerance:
            raise SystemExit(f"{who} computes {what} wrong: relative error {err:.2e}")


def time_interleaved(contenders, rounds, settle=0.05, before=None, faults=None):
    """{name: [ms per round]} for `contenders` ({name: callable()}). Each
    call starts `settle` seconds after the one before: the worker threads
    of a multi-threaded contender (OpenMP's, OpenBLAS's) spin for a while
    after a call and would slow whichever comes next. `before`, when given,
    is called (untimed) before each call: to evict the caches, say.
    `faults`, when given (a dict), gets {name: [minor page faults per
    round]}: the pages the process touched for the first time."""
    times = {who: [] for who in contenders}
    if faults is not None:
        faults.update({who: [] for who in contenders})
    for _ in range(rounds):
        for who, f in contenders.items():
            if before is not None:
                before()
            time.sleep(settle)
            first = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.perf_counter()
            f()
            times[who].append((time.perf_counter() - start) * 1e3)
            if faults is not None:
                faults[who].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - first)
    return times


def report(title, times, ratio_to, flops=None):
    """Prints a table of `times` and returns {name: {median, min, max}}: the
    ratio column is against `ratio_to`'s median; with `flops`, GFLOP/s."""
    ref = float(np.median(times[ratio_to]))
    print(f"\n{title} (median / min / max ms{', GFLOP/s' if flops else ''}, "
          f"ratio to {ratio_to})")
    summary = {}
    for who, ts in times.items():
        med = float(np.median(ts))
        summary[who] = {"median": med, "min": float(min(ts)), "max": float(max(ts))}
        rate = f"{flops / med / 1e6:8.1f} " if flops else ""
        print(f"  {who:20s} {med:9.2f} {min(ts):9.2f} {max(ts):9.2f} {rate}  "
              f"{med / ref:6.2f}x")
    return summary
