"""Time and memory of one self-attention layer against sequence length (chapter 3's cost figure,
at larger sizes and with every thread the machine offers).

Run: .venv/bin/python bench/attention_cost.py [--d 128] [--max-T 8192] [--threads N]   (or `make bench`)

For T = 32, 64, …, max-T it prints the best-of-3 wall time, the peak bytes held by the tensors the
layer creates (tformer.bench_utils.peak_tensor_bytes), the multiply-add count of the chapter's
table (3Td² + T²d_k + T²d_v) and the achieved multiply-adds per second, then the log–log slopes
over the largest three lengths (1 = linear, 2 = quadratic). Also compares the per-query loop with
the batched implementation at T = 1024.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch

import tformer
from tformer.attention import self_attention_multiply_adds
from tformer.bench_utils import machine_description, peak_tensor_bytes, time_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=128, help="d = d_k = d_v (default 128)")
    parser.add_argument("--max-T", type=int, default=8192, help="largest length (default 8192)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = tformer.device()
    torch.manual_seed(0)
    layer = tformer.SelfAttention(args.d, args.d, args.d, bias=False).to(device)
    print(machine_description(), "| device:", device)
    print(f"d = d_k = d_v = {args.d}; crossover T* = 1.5 d = {1.5 * args.d:.0f}")
    print(f"{'T':>6} {'time (ms)':>10} {'peak (MiB)':>11} {'multiply-adds':>15} {'GMAC/s':>8}")
    lengths, seconds, peaks = [], [], []
    length = 32
    while args.max_T >= length:
        T = length
        x = torch.randn(T, args.d, device=device)
        elapsed = time_call(layer, x, repeats=3)
        peak = peak_tensor_bytes(layer, x)
        count = self_attention_multiply_adds(T, args.d)["total"]
        print(f"{T:>6} {1e3 * elapsed:>10.2f} {peak / 2**20:>11.2f} {count:>15,} "
              f"{count / elapsed / 1e9:>8.2f}")
        lengths.append(T)
        seconds.append(elapsed)
        peaks.append(peak)
        length *= 2
    if len(lengths) >= 3:
        log_t = np.log2(lengths[-3:])
        print(f"log–log slope over the three largest T: time "
              f"{np.polyfit(log_t, np.log2(seconds[-3:]), 1)[0]:.2f}, memory "
              f"{np.polyfit(log_t, np.log2(peaks[-3:]), 1)[0]:.2f}")

    queries, keys, values = torch.randn(3, 1024, 64, device=device).unbind(0)
    t_loop = time_call(tformer.attention_loop, queries, keys, values, repeats=3)
    t_batched = time_call(tformer.scaled_dot_product_attention, queries, keys, values, repeats=10)
    print(f"T = 1024, d_k = 64: loop {1e3 * t_loop:.1f} ms, batched {1e3 * t_batched:.2f} ms, "
          f"speed-up {t_loop / t_batched:.0f}× (log10 {math.log10(t_loop / t_batched):.1f})")


if __name__ == "__main__":
    main()
