#!/usr/bin/env python3
"""Example application leg for `cuport regress` (see regress/apps.toml).

Stands in for "the CUDA build" and "the ported build" of one program: it
computes y = a*x + y and dot(x, y) on a fixed input, writes both results as
.npy into $CUPORT_OUT, and times each region into $CUPORT_OUT/timings.json.

    python3 saxpy.py reference   # float64 arithmetic, results stored as f32
    python3 saxpy.py candidate   # every step rounded to float32, like a device
                                 # that computes in f32

Only the Python standard library is used, so it runs wherever cuport does.
"""
import array
import json
import os
import random
import struct
import sys
import time

N = 1 << 14
SAMPLES = 15


def write_npy(path, values):
    """Write a 1-D little-endian float32 array in .npy format 1.0."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    # Pad so the data starts on a 64-byte boundary; the header ends in \n.
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    data = array.array("f", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data.tobytes())


def as_f32(values):
    """Round every value to the nearest float32."""
    return array.array("f", values).tolist()


def saxpy(variant, a, x, y):
    if variant == "reference":
        return [a * xi + yi for xi, yi in zip(x, y)]
    products = as_f32([a * xi for xi in x])
    return as_f32([p + yi for p, yi in zip(products, y)])


def dot(variant, x, y):
    if variant == "reference":
        return sum(xi * yi for xi, yi in zip(x, y))
    acc = array.array("f", [0.0])
    for xi, yi in zip(x, y):
        acc[0] = acc[0] + as_f32([xi * yi])[0]
    return acc[0]


def timed(fn, samples):
    """Run fn `samples` times; return its last result and the seconds each took."""
    seconds = []
    for _ in range(samples):
        start = time.perf_counter()
        result = fn()
        seconds.append(time.perf_counter() - start)
    return result, seconds


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("reference", "candidate"):
        sys.exit("usage: saxpy.py reference|candidate")
    variant = sys.argv[1]
    out = os.environ.get("CUPORT_OUT")
    if not out:
        sys.exit("CUPORT_OUT is not set: run this through `cuport regress`")
    rng = random.Random(7)
    x = as_f32(rng.uniform(-1, 1) for _ in range(N))
    y = as_f32(rng.uniform(-1, 1) for _ in range(N))
    a = 1.5
    y_new, t_saxpy = timed(lambda: saxpy(variant, a, x, y), SAMPLES)
    d, t_dot = timed(lambda: dot(variant, x, y), SAMPLES)
    write_npy(os.path.join(out, "y.npy"), y_new)
    write_npy(os.path.join(out, "dot.npy"), [d])
    timings = {
        "regions": {"saxpy": t_saxpy, "dot": t_dot},
        "unit": "s",
        "device": {"model": "host CPU (Python %d.%d, %s)" % (sys.version_info[0], sys.version_info[1], variant)},
    }
    with open(os.path.join(out, "timings.json"), "w") as f:
        json.dump(timings, f)


if __name__ == "__main__":
    main()
