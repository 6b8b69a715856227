"""How GPU kernels access memory, counted by the GPU emulator.

    from fuel_mlir import memory_profile, runner
    f = runner.compile(text, "f", target="cuda-emulator", memory_profile=True)
    with memory_profile.record(blocks=8) as profile:
        f(x)
    print(profile.table())        # a line a kernel
    print(profile.site_table())   # a line a load or store

A function compiled with `memory_profile=True` (fuel-to-nvvm or
fuel-to-rocdl with `format=emulator-profile`) calls the emulator before
each load and store of its kernels (but those of a thread's private
memory). The lanes of a warp (an AMD wave) that execute the same load or
store for the same time make one request, which the emulator counts as a
GPU would serve it:

- device memory: the 32-byte sectors the lanes' bytes fall in, against the
  fewest sectors that hold those bytes. `efficiency` is the bytes asked
  for over the bytes of the sectors moved: 1 when every request is
  coalesced, 1/8 when each lane's 4 bytes fall in a sector of their own.
- workgroup memory: the wavefronts its 32 banks of 4 bytes need (a group
  of lanes asking for up to 128 bytes is served by as many wavefronts as
  the most distinct words any one bank holds of it), against the fewest
  that hold the words. `conflicts` is their ratio: 1 without bank
  conflicts, 32 when every lane's word sits in the same bank.

The kernels counted are those LLVM's optimizer leaves for the GPU (at the
target's opt level: a repeated load is one, neighbouring floats the
load-store vectorizer joins are one vector). An access is one request per
piece its alignment allows, 16 bytes at most (a `vector<8xf32>` aligned to
16 bytes is two, a `vector<4xf32>` aligned to 4 is four), as the backends
split it. These are counts of requests, not times: caches, latencies and
what runs at once are not modeled, and the counts are the same on every
run (and in every emulator order). docs/GPU.md has the model and the bench's
figures (`python bench/gpu.py --emulator --memory-profile`).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Iterator, List

from .runner import RunnerError, _emulator_runtime

__all__ = ["record", "figures", "MemoryProfile", "KernelProfile", "Site"]


@dataclass
class Site:
    """One load or store of a kernel, and what its requests needed."""

    function: str  # the kernel (or device function) it is in
    op: str        # "load" or "store"
    type: str      # what it moves: f32, vector<4xf32>, ...
    alignment: int  # bytes its address is known to be a multiple of
    location: str
    space: str     # "device" or "workgroup"
    requests: int  # warp-wide requests
    bytes: int     # distinct bytes the lanes asked for, summed
    units: int     # 32-byte sectors (device), wavefronts (workgroup)
    ideal: int     # the fewest units those bytes need


def _ratio(sites, space, op, measure):
    chosen = [s for s in sites if s.space == space and (op is None or s.op == op)]
    if not chosen:
        return None
    units = sum(s.units for s in chosen)
    if measure == "efficiency":
        return sum(s.bytes for s in chosen) / (32 * units) if units else None
    ideal = sum(s.ideal for s in chosen)
    return units / ideal if ideal else None


@dataclass
class KernelProfile:
    """The counts of one kernel, over its profiled blocks."""

    module: str
    kernel: str
    launches: int
    blocks: int  # profiled blocks, over all launches
    sites: List[Site] = field(default_factory=list)

    def efficiency(self, op=None):
        """Device memory: bytes asked for over bytes of the sectors moved
        (loads, stores, or both with None); None without such requests."""
        return _ratio(self.sites, "device", op, "efficiency")

    def conflicts(self, op=None):
        """Workgroup memory: wavefronts over the fewest possible (1: no
        bank conflicts); None without such requests."""
        return _ratio(self.sites, "workgroup", op, "conflicts")


# The columns `figures` fills.
FIGURES_HEADER = f"{'ld eff':>7s} {'st eff':>7s} {'wg ld':>6s} {'wg st':>6s}"


def figures(profile) -> str:
    """The four figures of a MemoryProfile or a KernelProfile, aligned
    under FIGURES_HEADER: the efficiency of its device loads and stores,
    the bank conflicts of its workgroup loads and stores ('-': none of
    those)."""
    def show(v, fmt, width):
        return f"{'-':>{width}s}" if v is None else fmt.format(v)

    return (f"{show(profile.efficiency('load'), '{:7.0%}', 7)} "
            f"{show(profile.efficiency('store'), '{:7.0%}', 7)} "
            f"{show(profile.conflicts('load'), '{:5.2f}x', 6)} "
            f"{show(profile.conflicts('store'), '{:5.2f}x', 6)}")


class MemoryProfile:
    """What `record` counted, per kernel, in the order of their first
    launch."""

    def __init__(self):
        self.kernels: List[KernelProfile] = []

    @property
    def sites(self) -> List[Site]:
        return [s for k in self.kernels for s in k.sites]

    def efficiency(self, op=None):
        """Over every kernel: see KernelProfile.efficiency."""
        return _ratio(self.sites, "device", op, "efficiency")

    def conflicts(self, op=None):
        """Over every kernel: see KernelProfile.conflicts."""
        return _ratio(self.sites, "workgroup", op, "conflicts")

    def _load(self, report: dict) -> None:
        for k in report["kernels"]:
            sites = []
            for s in k["sites"]:
                function, op, type_, alignment, location = s["site"].split("\t")
                sites.append(Site(function, op, type_, int(alignment), location, s["space"],
                                  s["requests"], s["bytes"], s["units"], s["ideal"]))
            self.kernels.append(KernelProfile(k["module"], k["kernel"], k["launches"],
                                              k["blocks"], sites))

    def table(self) -> str:
        """One line a kernel (named by its module, which outlining names
        after it: f_kernel, f_kernel_0, ...): its launches and profiled blocks, the
        efficiency of its device loads and stores, and the bank conflicts
        of its workgroup loads and stores (`figures`)."""
        lines = [f"{'kernel (module)':40s} {'launches':>8s} {'blocks':>6s} {FIGURES_HEADER}"]
        lines += [f"{k.module:40s} {k.launches:8d} {k.blocks:6d} {figures(k)}"
                  for k in self.kernels]
        return "\n".join(lines)

    def site_table(self) -> str:
        """One line a load or store that made requests: its kernel
        (module), load or store, device or workgroup memory, what it moves
        and its alignment (a vector is moved in pieces of it, 16 bytes at
        most), its requests, its efficiency (device) or bank conflicts
        (workgroup), and its location."""
        lines = [f"{'kernel (module)':24s} {'op':5s} {'space':9s} {'type':16s} {'align':>5s} "
                 f"{'requests':>9s} {'figure':>7s}  location"]
        for k in self.kernels:
            for s in k.sites:
                if not s.requests:
                    continue
                if s.space == "device":
                    figure = f"{_ratio([s], 'device', None, 'efficiency'):7.0%}"
                else:
                    figure = f"{_ratio([s], 'workgroup', None, 'conflicts'):6.2f}x"
                lines.append(f"{k.module:24s} {s.op:5s} {s.space:9s} {s.type:16s} "
                             f"{s.alignment:5d} {s.requests:9d} {figure}  {s.location}")
        return "\n".join(lines)


@contextlib.contextmanager
def record(blocks: int = 16) -> Iterator[MemoryProfile]:
    """Counts the memory requests of the kernels launched in the `with`
    block (of functions compiled with `memory_profile=True`): in each
    launch, `blocks` blocks spread over the grid (the first of each of
    `blocks` equal runs, and the last block), or every block with 0. The
    profile is filled in when the block ends."""
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 0:
        raise RunnerError(f"blocks must be an int >= 0 (0: every block), got {blocks!r}")
    lib = _emulator_runtime()
    profile = MemoryProfile()
    lib.fuel_emu_profile_start(blocks)
    try:
        yield profile
    finally:
        lib.fuel_emu_profile_stop()
        profile._load(json.loads(lib.fuel_emu_profile_report().decode()))
