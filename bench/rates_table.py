"""Print a committed seed-rate result as a Markdown table: seeds (of 10) per claim and kernel.

    PYTHONPATH=src python bench/rates_table.py sorter ch10_char

For the per-chapter tables in bench/README.md (the numbers come from the committed JSON, never
typed). A claim below 10 under some kernel is marked with *.
"""

from __future__ import annotations

import sys

from tformer import seed_rates


def table(name: str) -> str:
    result = seed_rates.load(name)
    kernels = list(result["kernels"])
    claims = list(next(iter(result["kernels"].values()))["claims"])
    of = len(result["seeds"])
    lines = [
        f"`{name}.json` ({result['torch']}, {result['date']}; seeds of {of}):",
        "",
        "| claim | " + " | ".join(kernels) + " | runs |",
        "|---|" + "---:|" * (len(kernels) + 1),
    ]
    for claim in claims:
        rate = seed_rates.rate(name, claim)
        mark = "" if rate.everywhere else " *"
        counts = " | ".join(str(rate.per_kernel[k]) for k in kernels)
        lines.append(f"| `{claim}`{mark} | {counts} | {rate.total}/{rate.runs} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(table(name) for name in sys.argv[1:] or seed_rates.names()))
