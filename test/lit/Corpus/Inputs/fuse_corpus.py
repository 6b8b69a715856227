"""Prints what --fuel-fuse finds in each export of test/corpus, as exported
and after upstream elementwise fusion: one line per file and variant."""

import collections
import pathlib
import re
import subprocess
import sys


def fused_ops(fuel_opt, path, flags):
    text = path.read_text()
    for f in flags:
        text = run(fuel_opt, text, f)
    out = run(fuel_opt, text, "--fuel-fuse")
    counts = collections.Counter(re.findall(r"fuel\.fused ([a-z0-9_]+)", out))
    return " ".join(f"{name}={n}" for name, n in sorted(counts.items())) or "none"


def run(fuel_opt, text, *flags):
    p = subprocess.run([fuel_opt, *flags], input=text, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    return p.stdout


def main():
    fuel_opt, corpus = sys.argv[1], pathlib.Path(sys.argv[2])
    for path in sorted(corpus.glob("*/*.mlir")):
        for variant, flags in (("as-exported", []), ("elementwise-fused", ["--linalg-fuse-elementwise-ops"])):
            print(f"{path.parent.name}/{path.name} {variant}: {fused_ops(fuel_opt, path, flags)}")


if __name__ == "__main__":
    main()
