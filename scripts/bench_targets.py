#!/usr/bin/env python3
"""Issue 27's whole-kernel targets checked against one `visa bench --all --json` run (standard input).

Usage: build/visa bench --all --threads 1 --json | scripts/bench_targets.py
Prints, target by target, how many samples or ops meet it and every one that does not, with its
figures. Only what the JSON holds is judged: a figure a sample skipped (an interpreter past its
budget, a relaunch that could not run) is listed as not measured, never as met.

Vector Engine pipelines are judged per sample, for the samples whose only compute engine is the
Vector Engine (each op's `engines`): their summed warm times against the sample's host loop.

Data-movement ops are the DMA engine's and the sub context's (register-file loads, copies): the
resources `dma` and `sub` (runtime/op_description.h); the targets hold them to memcpy of the bytes
they write: for a relaunch, memcpy into a destination out of the core's caches from a source just
written (`memcpy_cold_dst_s`, as a relaunch's op finds its buffers; older JSON without it falls back
to `memcpy_s`), with the count against `memcpy_s` (both buffers cache-hot) printed beside it; fresh
pages for a fresh device.
"""
import json
import sys

MIB = 1 << 20


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3g} ms"


def ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def x(r):
    return "-" if r is None else f"{r:.3g}x"


class Target:
    def __init__(self, text):
        self.text, self.met, self.missed, self.unmeasured = text, 0, [], []

    def judge(self, name, value, ok, figures):
        if value is None:
            self.unmeasured.append(name)
        elif ok(value):
            self.met += 1
        else:
            self.missed.append(f"{name}: {figures}")

    def report(self):
        total = self.met + len(self.missed) + len(self.unmeasured)
        print(f"## {self.text}: {self.met} of {total} met")
        for line in self.missed:
            print(f"- missed: {line}")
        if self.unmeasured:
            print(f"- not measured: {', '.join(self.unmeasured)}")
        print()


def judge_vector_engine(target, s):
    """A sample whose pipelines run the Vector Engine and no other compute engine: the host reference
    does the same math, so the vector pipelines' warm times are held to it. The fixed cost each
    pipeline may pay (20 us, the fixed-cost target) is printed beside a miss: below it the sample is
    too small to tell the kernels' speed from the per-op cost."""
    ops = s["ops"]
    if any("engines" not in op for op in ops):
        note = "samples of a JSON from before ops reported their engines"
        if note not in target.unmeasured:
            target.unmeasured.append(note)
        return
    engines = {e for op in ops for e in op["engines"]}
    if "vector" not in engines or engines - {"vector"}:
        return
    vector_ops = [op for op in ops if "vector" in op["engines"]]
    warm = [op["jit_warm_s"] for op in vector_ops]
    total = None if any(w is None for w in warm) else sum(warm)
    host = s.get("host_reference_s")
    if not host:
        target.unmeasured.append(s["sample"])
        return
    target.judge(s["sample"], ratio(total, host), lambda r: r <= 2,
                 f"{len(vector_ops)} vector pipelines warm {ms(total)}, host loop {ms(host)} "
                 f"({x(ratio(total, host))}; fixed cost allowed: {ms(20e-6 * len(vector_ops))})")


def main():
    samples = [s for s in json.load(sys.stdin) if "ops" in s]
    faster = Target("no sample's JIT run slower than its interpreter run (fresh)")
    warm50 = Target("interpreter >= 10 ms: JIT warm at least 50x faster")
    fresh20 = Target("interpreter >= 10 ms: JIT fresh at least 20x faster")
    compile100 = Target("first compile of every sample's program at most 100 ms")
    move_warm = Target("data-movement ops writing >= 1 MiB: warm at most 1.5x memcpy (destination out of the "
                       "core's caches, source just written)")
    move_warm_hot = Target("the same against memcpy with both buffers cache-hot (information)")
    move_fresh = Target("data-movement ops writing >= 1 MiB: fresh at most 2.5x memcpy into fresh pages")
    fixed = Target("fixed cost of an op in a warm relaunch at most 20 us (tiny_ops: a program of tiny ops, "
                   "its relaunch / its op count)")
    vector = Target("Vector Engine pipelines at most 2x the sample's host loop (samples whose compute is the "
                    "Vector Engine alone: their vector pipelines' warm times summed against the host reference)")
    slow_fastest = []  # samples whose fastest op takes over 20 us warm: information, not the target
    for s in samples:
        name, interp, fresh, warm = s["sample"], s["interp_s"], s["jit_run_s"], s["jit_warm_s"]
        faster.judge(name, ratio(interp, fresh), lambda r: r >= 1, f"interp {ms(interp)}, fresh {ms(fresh)}")
        if interp is not None and interp >= 0.010:
            warm50.judge(name, ratio(interp, warm), lambda r: r >= 50,
                         f"interp {ms(interp)}, warm {ms(warm)} ({x(ratio(interp, warm))})")
            fresh20.judge(name, ratio(interp, fresh), lambda r: r >= 20,
                          f"interp {ms(interp)}, fresh {ms(fresh)} ({x(ratio(interp, fresh))}), "
                          f"page faults {sum(op['jit_run_page_faults'] for op in s['ops'])}")
        compile100.judge(name, s["jit_compile_first_s"], lambda t: t <= 0.100, ms(s["jit_compile_first_s"]))
        if name == "tiny_ops":
            per_op = None if warm is None else warm / len(s["ops"])
            fixed.judge(name, per_op, lambda t: t <= 20e-6, f"{ms(per_op)} per op ({len(s['ops'])} ops)")
        fastest = s.get("warm_fastest_op_s")
        if fastest is not None and fastest > 20e-6:
            slow_fastest.append(f"{name} {ms(fastest)}")
        for op in s["ops"]:
            if op["resource"] not in ("dma", "sub") or op["written_bytes"] < MIB:
                continue
            where = f"{name} op {op['index']} ({op['kind']}, {op['written_bytes'] / MIB:.3g} MiB)"
            cold_cp = op.get("memcpy_cold_dst_s", op["memcpy_s"])
            move_warm.judge(where, ratio(op["jit_warm_s"], cold_cp), lambda r: r <= 1.5,
                            f"warm {ms(op['jit_warm_s'])}, memcpy {ms(cold_cp)} "
                            f"({x(ratio(op['jit_warm_s'], cold_cp))})")
            move_warm_hot.judge(where, ratio(op["jit_warm_s"], op["memcpy_s"]), lambda r: r <= 1.5,
                                f"warm {ms(op['jit_warm_s'])}, memcpy {ms(op['memcpy_s'])} "
                                f"({x(ratio(op['jit_warm_s'], op['memcpy_s']))})")
            fresh_cp = op.get("memcpy_fresh_s")
            move_fresh.judge(where, ratio(op["jit_run_s"], fresh_cp), lambda r: r <= 2.5,
                             f"fresh {ms(op['jit_run_s'])}, memcpy into fresh pages {ms(fresh_cp)} "
                             f"({x(ratio(op['jit_run_s'], fresh_cp))}), page faults {op['jit_run_page_faults']}")
        judge_vector_engine(vector, s)
    if not any(s["sample"] == "tiny_ops" for s in samples):
        fixed.unmeasured.append("tiny_ops")
    for target in (faster, warm50, fresh20, compile100, move_warm, move_warm_hot, move_fresh, vector, fixed):
        target.report()
    if slow_fastest:
        print("Samples whose fastest op takes over 20 us warm (each of these ops does real work; the fixed "
              f"cost is tiny_ops'): {', '.join(slow_fastest)}")


if __name__ == "__main__":
    main()
