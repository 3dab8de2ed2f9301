"""Banded against masked sliding-window attention at larger sizes (chapter 11 measures T ≤ 4,096).

Usage: .venv/bin/python bench/ch11_windows.py [max_T=16384] [window=128]

For T = 1,024 … max_T, one head (d_k = 64, float32, one thread): best-of-3 time and peak tensor
memory (tformer.profiling.MemoryTracker) of ``sliding_window_attention`` (masks a full T × T score
matrix) and ``banded_attention`` (blocks of w against 2w keys), their largest difference, and the
log-log slopes over the largest three sizes (1 = linear, 2 = quadratic). Printed, never asserted.
Timings are not seed claims: the chapter's trained comparison of full and windowed attention is
counted per seed and CPU kernel by ``bench/ch11_copier_seeds.py``.
"""

from __future__ import annotations

import math
import sys
import time

import torch

from tformer.efficient import banded_attention, sliding_window_attention
from tformer.profiling import peak_memory


def best_time(function, *args, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def slope(xs, ys) -> float:
    return (math.log(ys[-1]) - math.log(ys[-3])) / (math.log(xs[-1]) - math.log(xs[-3]))


def main(max_t: int = 16384, window: int = 128) -> int:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    sizes = [1024 * 2**k for k in range(int(math.log2(max_t // 1024)) + 1)]
    rows = {"masked": [], "banded": []}
    print(f"window {window}, d_k 64, one thread")
    print("     T   masked ms  masked MiB   banded ms  banded MiB   max diff")
    for t in sizes:
        q, k, v = (torch.randn(1, t, 64) for _ in range(3))
        masked = sliding_window_attention(q, k, v, window).outputs
        banded = banded_attention(q, k, v, window)
        diff = float((masked - banded).abs().max())
        for name, fn in (("masked", lambda *a: sliding_window_attention(*a).outputs),
                         ("banded", banded_attention)):
            rows[name].append((best_time(fn, q, k, v, window),
                               peak_memory(fn, q, k, v, window)[1]))
        (mt, mm), (bt, bm) = rows["masked"][-1], rows["banded"][-1]
        print(f"{t:6d}  {mt * 1e3:10.1f}  {mm / 2**20:10.1f}  {bt * 1e3:10.1f}  "
              f"{bm / 2**20:10.1f}  {diff:9.1e}", flush=True)
    for name, values in rows.items():
        print(f"{name}: slope of time {slope(sizes, [t for t, _ in values]):.2f}, "
              f"of memory {slope(sizes, [m for _, m in values]):.2f}")
    return 0


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    sys.exit(main(*args))
