"""Rebuild the guard's shipped base data and default model, bit for bit.

    python -m agentgov.ml.guard.train                                   # from the shipped base data
    python -m agentgov.ml.guard.train --data A.jsonl [--data B.jsonl]   # from labelled JSON-lines files
    python -m agentgov.ml.guard.train --check                           # rebuild in memory; exit 1 if it differs

The shipped base data is `../shared/data/guard/train.jsonl` followed by `../shared/data/guard/dev.jsonl`:

    python -m agentgov.ml.guard.train --data ../shared/data/guard/train.jsonl --data ../shared/data/guard/dev.jsonl

With `--data` the files are first joined, in the order given, and packed into `agentgov/ml/guard/data/base.jsonl.gz`
(gzip without a timestamp, so the same files give the same bytes); the default model is then fitted on the packed
data with the default
parameters and written to `agentgov/ml/guard/data/default_model.json` (sorted keys, arrays as float16).
Fitting is deterministic, so the bytes only change when the data, the parameters or the code do. Its sums run in
OpenBLAS (liblinear's and L-BFGS's) and in NumPy's own vector loops, whose results depend on the kernels each picks
for the processor (and OpenBLAS's on its threads), so the rebuild runs in a child process with both pinned
(`PINNED_KERNELS`: OpenBLAS's Haswell kernels and one thread, NumPy's loops without AVX-512, which every x86-64
processor with AVX2 runs): the same bytes on any such machine. Takes about a minute.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

from agentgov.ml.guard.base import BASE_DATA, DATA_PACKAGE, DEFAULT_MODEL, base_examples, parse_rows
from agentgov.ml.guard.fit import GuardParams, fit

DEFAULT_VERSION = "base-18"
#: The environment the fit runs in (set before NumPy and OpenBLAS load, so in a child process): the same kernels
#: and one thread on every x86-64 machine with AVX2, so that the same data gives the same bytes. NumPy picks its
#: loops by the processor too: on a processor with AVX-512 its sums gave another model until those loops were
#: disabled (the names of NumPy 2.4 and of the releases before it; a name a release does not know is ignored).
#: Elsewhere (another processor, a NumPy built on another BLAS) the fit still runs, and `--check` may report a
#: difference.
PINNED_KERNELS = {
    "OPENBLAS_CORETYPE": "Haswell",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX "
    "AVX512_CLX AVX512_CNL",
}


def kernels_pinned() -> bool:
    """Whether this process runs with `PINNED_KERNELS`."""
    return all(os.environ.get(name) == value for name, value in PINNED_KERNELS.items())


def pack(data: bytes) -> bytes:
    """`data` gzipped deterministically (no file name, no timestamp)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def join_files(paths: list[Path]) -> bytes:
    """The files' bytes one after another, each ending with a newline (so the last row of one and the first row
    of the next never share a line). Raises `OSError` for a file that cannot be read."""
    parts = []
    for path in paths:
        data = path.read_bytes()
        parts.append(data if data.endswith(b"\n") or not data else data + b"\n")
    return b"".join(parts)


def build_document() -> bytes:
    """The default model's document, as the bytes written to `default_model.json`."""
    raw = resources.files(DATA_PACKAGE).joinpath(BASE_DATA).read_bytes()
    examples = base_examples()
    params = GuardParams()
    model, metrics = fit(examples, params)
    document = {
        "version": DEFAULT_VERSION,
        "trained_on": {"file": BASE_DATA, "sha256": hashlib.sha256(raw).hexdigest(), "rows": len(examples)},
        "params": params.to_dict(),
        "metrics": metrics,
        "model": model.to_document(),
    }
    return (json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    """The command (see the module docstring); returns its exit status. Outside `PINNED_KERNELS` it runs itself in a
    child process with it, whose output goes to this process's standard output and error."""
    if not kernels_pinned():
        command = [sys.executable, "-m", "agentgov.ml.guard.train", *(sys.argv[1:] if argv is None else argv)]
        return subprocess.run(command, env={**os.environ, **PINNED_KERNELS}, check=False).returncode
    parser = argparse.ArgumentParser(prog="python -m agentgov.ml.guard.train", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        help="a labelled JSON-lines file to pack into the base data first (repeat to join several, in order)",
    )
    parser.add_argument("--check", action="store_true", help="rebuild in memory and compare with the shipped model")
    args = parser.parse_args(argv)
    folder = Path(str(resources.files(DATA_PACKAGE)))
    if args.data:
        content = join_files(args.data)
        parse_rows(content.decode("utf-8").split("\n"))  # refuse a malformed file before writing anything
        (folder / BASE_DATA).write_bytes(pack(content))
    started = time.monotonic()
    built = build_document()
    took = time.monotonic() - started
    target = folder / DEFAULT_MODEL
    if args.check:
        same = target.exists() and target.read_bytes() == built
        print(f"default model {'identical' if same else 'DIFFERS'} ({len(built):,} bytes, fitted in {took:.1f} s)")
        return 0 if same else 1
    target.write_bytes(built)
    print(f"wrote {target} ({len(built):,} bytes, fitted in {took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
