#!/usr/bin/env python3
"""The app's streaming speed against the engine's: `bench_streaming.py BUILD[,BUILD...] MODEL TOKENS ROUNDS [LOCK]`.

Each round runs, one after the other, ember-cli on MODEL (the app's device, budget, prompt, sampling
and seed), then ember-frame-probe in an Xvfb window with the renderer Qt picks, with
QT_QUICK_BACKEND=software, with OpenGL forced (QSG_RHI_BACKEND=opengl: Mesa's llvmpipe without a
GPU), and on the offscreen platform. With several build folders (a before and an after), each
setup runs every build's probe in turn, so they compare under the same load. Prints every run,
then the median of each figure per setup (the first-text trials' figures are medians of each
run's medians).
With LOCK (a shared build lock such as /tmp/ember-build.lock), every run holds it, so nothing else
built or tested at the same time takes the cores, and nothing waits for a whole series.
"""
import os
import re
import statistics
import subprocess
import sys

PROMPT = "And God said, Let there be light"  # ember-frame-probe's
SEED = "1234"
XVFB = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24"]
SETUPS = {
    "xvfb, Qt's choice": (XVFB, {}),
    "xvfb, software": (XVFB, {"QT_QUICK_BACKEND": "software"}),
    "xvfb, OpenGL (llvmpipe)": (XVFB, {"QSG_RHI_BACKEND": "opengl"}),
    "offscreen": ([], {"QT_QPA_PLATFORM": "offscreen"}),
}
FIGURES = {
    "app tok/s": r"app: +\d+ tokens at ([\d.]+) tok/s",
    "engine alone tok/s": r"engine alone: \d+ tokens at ([\d.]+) tok/s",
    "app / engine %": r"\((\d+) % of the engine alone\)",
    "first answer: text alone ms": r"engine alone: .*first text ([\d.]+) ms",
    "first answer: text on screen ms": r"on screen ([-\d.]+) ms after send",
    "trials: first text alone ms": r"first text medians: engine alone ([\d.]+) ms",
    "trials: first text app ms": r"first text medians: .* app ([\d.]+) ms",
    "trials: app - alone ms": r"app - engine alone ([-+\d.]+) ms",
    "GUI thread % core": r"GUI thread ([\d.]+)",
    "other threads % core": r"other threads ([\d.]+)",
    "frames/s": r"frames rendered \(([\d.]+) a second\)",
    "max gap ms": r"max ([\d.]+) ms",
    "gaps over 16 ms": r"(\d+) over 16 ms",
    "stop ms": r"Stop: .* ([\d.]+) ms after stop",
}


def run(cmd, env=None):
    if LOCK:
        cmd = ["flock", LOCK] + cmd
    out = subprocess.run(cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=900)
    return out.stdout + out.stderr


LOCK = sys.argv[5] if len(sys.argv) > 5 else None


def main():
    builds, model, tokens, rounds = sys.argv[1].split(","), sys.argv[2], sys.argv[3], int(sys.argv[4])
    budget_gib = os.path.getsize(model) * 9 // 10 / 2**30  # AppShell::start's budget
    cli = [f"{builds[-1]}/bin/ember-cli", "-m", model, "-p", PROMPT, "-n", tokens, "--temp", "0.7", "--seed", SEED,
           "--device", "sim", "--vram-budget", f"{budget_gib:.6f}", "-c", "2048"]
    runs = [(f"{name} ({build})" if len(builds) > 1 else name, build, setup)
            for name, setup in SETUPS.items() for build in builds]
    results = {name: {f: [] for f in FIGURES} for name, _, _ in runs}
    cli_rates = []
    for r in range(rounds):
        out = run(cli)
        m = re.search(r"^eval: \d+ tokens, ([\d.]+) tok/s", out, re.M)
        cli_rates.append(float(m.group(1)) if m else float("nan"))
        print(f"round {r + 1}: ember-cli {cli_rates[-1]:.1f} tok/s", flush=True)
        for name, build, (prefix, env) in runs:
            out = run(prefix + [f"{build}/bin/ember-frame-probe", model, tokens], env)
            print(f"round {r + 1}, {name}:\n{out.strip()}", flush=True)
            for figure, pattern in FIGURES.items():
                m = re.search(pattern, out)
                if m:
                    results[name][figure].append(float(m.group(1)))
    print(f"\nmedians of {rounds} rounds; ember-cli {statistics.median(cli_rates):.1f} tok/s")
    for name, figures in results.items():
        shown = ", ".join(f"{f} {statistics.median(v):.1f}" for f, v in figures.items() if v)
        print(f"{name}: {shown}")


if __name__ == "__main__":
    main()
