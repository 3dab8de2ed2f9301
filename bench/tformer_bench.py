"""Speed and memory of tformer's attention against references (issue: tformer ratios).

Run: .venv/bin/python bench/tformer_bench.py   (or `make bench`)

1. Explicit attention (tformer.scaled_dot_product_attention, which also returns the weights)
   vs torch.nn.functional.scaled_dot_product_attention — B=4, h=8, T=512, d_k=64. Goal ≤ 1.5×.
2. Peak memory of tiled attention (online softmax) vs naive attention at T=4096, two ways: the
   peak bytes of the tensors each computation creates (tformer.profiling.MemoryTracker), and, in
   a fresh subprocess each, the rise of the process's peak resident memory (VmHWM) over its
   resident memory just before the call (on a GPU: torch.cuda.max_memory_allocated); the latter
   includes allocator and thread-pool overhead. Goal ≤ 1/8, equal output.
3. Generating 256 tokens with a KV cache vs recomputing the whole prefix every step. Goal ≥ 5×.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

import tformer
from tformer.efficient import tiled_attention
from tformer.generation import generate
from tformer.model import GPT, GPTConfig
from tformer.profiling import peak_memory


def best_of(function, repeats: int = 7) -> float:
    function()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times)


def attention_speed() -> dict:
    device = tformer.device()
    generator = torch.Generator().manual_seed(0)
    queries, keys, values = (torch.randn(4, 8, 512, 64, generator=generator).to(device) for _ in range(3))
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with torch.no_grad():
        ours = best_of(lambda: tformer.scaled_dot_product_attention(queries, keys, values))
        fused = best_of(lambda: F.scaled_dot_product_attention(queries, keys, values))
        with sdpa_kernel(SDPBackend.MATH):  # PyTorch's own unfused path, which also forms the weights
            unfused = best_of(lambda: F.scaled_dot_product_attention(queries, keys, values))
    return {
        "tformer_s": ours,
        "sdpa_default_s": fused,
        "sdpa_math_s": unfused,
        "ratio_vs_default": ours / fused,
        "ratio_vs_math": ours / unfused,
        "goal": "<= 1.5",
    }


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(field)


def _memory_child(kind: str, n_positions: int) -> None:
    """Runs in a subprocess: print the peak memory rise (bytes) of one attention call and a checksum."""
    device = tformer.device()
    generator = torch.Generator().manual_seed(0)
    queries, keys, values = (
        torch.randn(1, 1, n_positions, 64, generator=generator).to(device) for _ in range(3)
    )
    with torch.no_grad():
        # warm up both code paths on a tiny input so one-off start-up allocations are not counted
        small = [t[..., :256, :].clone() for t in (queries, keys, values)]
        tformer.scaled_dot_product_attention(*small)
        tiled_attention(*small, tile_size=128)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
        else:
            before = _rss_kib("VmRSS") * 1024
        if kind == "naive":
            outputs = tformer.scaled_dot_product_attention(queries, keys, values).outputs
        else:
            outputs = tiled_attention(queries, keys, values, tile_size=128)
        peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else _rss_kib("VmHWM") * 1024
    torch.save(outputs.cpu(), f"/tmp/tformer_bench_{kind}.pt")
    print(json.dumps({"peak_rise_bytes": peak - before}))


def tiled_tensor_memory(n_positions: int = 4096) -> dict:
    """Peak bytes of the tensors each computation creates (tformer.profiling.MemoryTracker)."""
    generator = torch.Generator().manual_seed(0)
    queries, keys, values = (torch.randn(1, 1, n_positions, 64, generator=generator) for _ in range(3))
    with torch.no_grad():
        naive, naive_peak, _ = peak_memory(tformer.scaled_dot_product_attention, queries, keys, values)
        tiled, tiled_peak, _ = peak_memory(tiled_attention, queries, keys, values, tile_size=128)
    return {
        "T": n_positions,
        "naive_MiB": naive_peak / 2**20,
        "tiled_MiB": tiled_peak / 2**20,
        "ratio": tiled_peak / naive_peak,
        "max_abs_difference": (naive.outputs - tiled).abs().max().item(),
        "goal": "<= 0.125 with equal output",
    }


def tiled_memory(n_positions: int = 4096) -> dict:
    rises = {}
    for kind in ("naive", "tiled"):
        result = subprocess.run(
            [sys.executable, __file__, "--memory-child", kind, str(n_positions)],
            capture_output=True, text=True, check=True,
        )
        rises[kind] = json.loads(result.stdout.strip().splitlines()[-1])["peak_rise_bytes"]
    naive, tiled = (torch.load(f"/tmp/tformer_bench_{kind}.pt") for kind in ("naive", "tiled"))
    max_difference = (naive - tiled).abs().max().item()
    return {
        "T": n_positions,
        "naive_MiB": rises["naive"] / 2**20,
        "tiled_MiB": rises["tiled"] / 2**20,
        "ratio": rises["tiled"] / max(rises["naive"], 1),
        "max_abs_difference": max_difference,
        "goal": "<= 0.125 with equal output",
    }


def kv_cache_speed(n_new: int = 256) -> dict:
    torch.manual_seed(0)
    config = GPTConfig(n_vocab=256, n_ctx=512, d=128, n_layers=4, n_heads=4)
    model = GPT(config).to(tformer.device()).eval()
    prompt = torch.randint(0, 256, (1, 16), device=tformer.device())
    timings, outputs = {}, {}
    for use_cache in (True, False):
        start = time.perf_counter()
        outputs[use_cache] = generate(model, prompt, n_new, use_cache=use_cache)
        timings[use_cache] = time.perf_counter() - start
    return {
        "cached_s": timings[True],
        "recompute_s": timings[False],
        "speedup": timings[False] / timings[True],
        "same_tokens": bool(torch.equal(outputs[True], outputs[False])),
        "goal": ">= 5",
    }


def main() -> None:
    print(f"# tformer benchmarks — {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"device {tformer.device()}")
    results = {
        "attention vs SDPA (B=4,h=8,T=512,d_k=64)": attention_speed(),
        "tiled vs naive peak tensor memory (T=4096)": tiled_tensor_memory(),
        "tiled vs naive peak resident memory of the process (T=4096)": tiled_memory(),
        "KV cache vs recompute (256 tokens)": kv_cache_speed(),
    }
    for name, values in results.items():
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items())
        print(f"{name}: {shown}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        _memory_child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
