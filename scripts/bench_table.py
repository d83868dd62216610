#!/usr/bin/env python3
"""The README's whole-kernel table from `visa bench --all --json` (read on standard input).

Usage: build/visa bench --all --threads 1 --json | scripts/bench_table.py > table.md
Columns: the interpreter's run, the JIT's first compile, its run on a fresh device and relaunched
on a warm one, the host reference, the page faults of the fresh run's ops, and the ratios the
whole-kernel targets are stated in (docs/performance.md).
"""
import json
import sys


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3g}"


def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.3g}x"


def main():
    samples = json.load(sys.stdin)
    print("| sample | ops | interpreter ms | first compile ms | JIT fresh ms | JIT warm ms | host ref ms "
          "| fresh faults | interp / fresh | interp / warm | warm / host ref |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in samples:
        if "ops" not in s:
            why = s.get("error") or s.get("skipped") or "not measured"
            print(f"| {s['sample']} | | {why} | | | | | | | | |")
            continue
        faults = sum(op.get("jit_run_page_faults", 0) for op in s["ops"])
        print(f"| {s['sample']} | {len(s['ops'])} | {ms(s['interp_s'])} | {ms(s['jit_compile_first_s'])} "
              f"| {ms(s['jit_run_s'])} | {ms(s['jit_warm_s'])} | {ms(s['host_reference_s'])} | {faults} "
              f"| {ratio(s['interp_s'], s['jit_run_s'])} | {ratio(s['interp_s'], s['jit_warm_s'])} "
              f"| {ratio(s['jit_warm_s'], s['host_reference_s'])} |")


if __name__ == "__main__":
    main()
