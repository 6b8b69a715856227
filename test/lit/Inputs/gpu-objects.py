"""Reads fuel-opt's output (gpu.binary ops from fuel-to-nvvm or
fuel-to-rocdl) on stdin and finishes each object with the vendor's tools:
PTX through ptxas, device LLVM IR through opt, llc and ld.lld. Prints one
line per GPU module: `<module>: <chip> ok <entries>`; exits 1 when a tool
rejects an object."""

import argparse
import sys

from fuel_mlir import gpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chip", action="append", required=True)
    args = parser.parse_args()
    text = sys.stdin.read()
    status = 0
    ptx = [(m.group(1), gpu._unescape(m.group(2))) for m in gpu._BINARY.finditer(text)]
    ir = [(m.group(1), gpu._unescape(m.group(2))) for m in gpu._OFFLOAD.finditer(text)]
    for chip in args.chip:
        for module, code in ptx:
            try:
                entries = [r.entry for r in gpu.ptxas(code, chip)]
                print(f"{module}: {chip} ok {' '.join(entries)}")
            except gpu.PtxasError as e:
                print(f"{module}: {chip} rejected: {e}")
                status = 1
        for module, code in ir:
            try:
                obj = gpu.amdgpu_code_object(code, chip)
                print(f"{module}: {chip} ok lds={obj.lds_bytes} scratch={obj.scratch_bytes}")
            except gpu.ToolError as e:
                print(f"{module}: {chip} rejected: {e}")
                status = 1
    if not ptx and not ir:
        print("no GPU objects")
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
