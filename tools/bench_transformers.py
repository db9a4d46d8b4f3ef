#!/usr/bin/python3
"""The CPU backend against PyTorch eager and ONNX Runtime on the same exports, batch 1.

    /usr/bin/python3 tools/bench_transformers.py [--threads 2] [--runs 10] [--rounds 3]
        [--ort DIR] [--no-spin] [MODEL ...]

MODELs (default: swin_t vit_b_16 convnext_tiny) are exports of tools/export_torchvision.py in
models/reference/ (--set transformers). Each round times, per model and in turn:
  jetagent      `jetagent inspect MODEL --profile RUNS --threads N --json`: the xnnpack backend's
                Session::run, median of RUNS after 3 warm-up runs
  pytorch       the same torchvision model with the export's weights (same seed), eager, under
                torch.inference_mode() with torch.set_num_threads(N), on the export's batch-1 input
  onnxruntime   ONNX Runtime's CPU engine (tools/ort_time.js, npm's onnxruntime-node found under
                --ort DIR/node_modules or NODE_PATH), all graph optimisations, N intra-op threads;
                its workers spin between runs unless --no-spin (jetagent's never do)
and prints the median of the rounds' medians, the ratios taken in this run, and the context the
figures depend on (CPU, load, PyTorch's BLAS). Engines run one after another, never together.
Install ONNX Runtime for it (npm; Debian packages none):
    npm install --prefix ~/.cache/jetagent-ort --ignore-scripts --no-audit --no-fund \\
        onnxruntime-node@1.30.0
    /usr/bin/python3 tools/bench_transformers.py --ort ~/.cache/jetagent-ort
Without it the onnxruntime column is left out, and says so.
Environment: JETAGENT (default build/src/jetagent).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def context(threads, ort_version):
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    governor = "?"
    try:
        governor = pathlib.Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip()
    except OSError:
        pass
    blas = "?"
    try:
        out = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"],
                             capture_output=True, text=True).stdout
        blas = next((l.split(": ", 1)[1] for l in out.splitlines() if l.startswith("Value:")), "?")
    except OSError:
        pass
    return (f"CPU: {cpu} ({os.cpu_count()} logical), governor {governor}, load "
            f"{os.getloadavg()[0]:.2f} at start; {threads} threads per engine; PyTorch's BLAS: {blas}; "
            f"ONNX Runtime: {ort_version or 'not found'}")


def time_jetagent(jetagent, model, threads, runs):
    out = subprocess.run([jetagent, "inspect", str(model), "--profile", str(runs), "--threads", str(threads),
                          "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"jetagent inspect {model.name}: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)["profile"]["run_median_ms"]


class Torch:
    def __init__(self, threads):
        import torch
        import torchvision
        import export_torchvision as exporter
        self.torch, self.torchvision, self.exporter = torch, torchvision, exporter
        torch.set_num_threads(threads)
        self.models = {}

    def time(self, name, runs, warmup=3):
        import numpy
        if name not in self.models:
            args = self.exporter.parse_arguments([name])
            model, _ = self.exporter.build(name, args, self.torch, self.torchvision)
            shape = (1, *self.exporter.MODELS[name].shape)
            data = numpy.fromfile(ROOT / "models" / "reference" / f"{name}.b1.input.f32", dtype="<f4")
            self.models[name] = (model, self.torch.from_numpy(data.reshape(shape)))
        model, x = self.models[name]
        times = []
        with self.torch.inference_mode():
            for i in range(warmup + runs):
                start = time.perf_counter()
                model(x)
                if i >= warmup:
                    times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)


def time_ort(node_path, model, threads, runs, spin):
    env = dict(os.environ, NODE_PATH=node_path)
    out = subprocess.run(["node", str(ROOT / "tools" / "ort_time.js"), str(model), "1", str(threads), str(runs),
                          "3", "1" if spin else "0"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-400:])
    result = json.loads(out.stdout)
    if result["relative_error"] > 1e-3:
        raise RuntimeError(f"onnxruntime's output is off by {result['relative_error']:.3g} relative")
    return result["median_ms"], result["version"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=["swin_t", "vit_b_16", "convnext_tiny"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per engine, model and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ort", type=pathlib.Path, help="npm --prefix directory holding onnxruntime-node")
    parser.add_argument("--no-spin", action="store_true", help="ONNX Runtime's workers sleep between runs")
    args = parser.parse_args()
    jetagent = os.environ.get("JETAGENT", str(ROOT / "build" / "src" / "jetagent"))
    if not os.access(jetagent, os.X_OK):
        parser.error(f"{jetagent} is not an executable: build jetagent first (tools/dev.sh build), "
                     "or set JETAGENT to the binary")
    models = []
    for name in args.models:
        path = ROOT / "models" / "reference" / f"{name}.onnx"
        if not path.exists():
            parser.error(f"{path} is missing: /usr/bin/python3 tools/export_torchvision.py {name} "
                         "exports it, if it is one of the models that script knows (its --list)")
        models.append((name, path))
    node_path = str(args.ort / "node_modules") if args.ort else os.environ.get("NODE_PATH", "")
    ort_version = None
    if node_path:
        probe = subprocess.run(["node", "-e", "console.log(require('onnxruntime-node').env.versions.common)"],
                               capture_output=True, text=True, env=dict(os.environ, NODE_PATH=node_path))
        ort_version = probe.stdout.strip() if probe.returncode == 0 else None
        if args.ort and not ort_version:
            # Asked for by name: an install that does not load is an error, not a column left out.
            errors = [line for line in probe.stderr.splitlines() if "Error" in line] or ["no error text"]
            parser.error(f"--ort {args.ort}: node cannot load onnxruntime-node from {node_path} "
                         f"({errors[0].strip()}); see --help for installing it")
    print(context(args.threads, ort_version), flush=True)
    print(f"batch 1; {args.rounds} rounds of {args.runs} timed runs per engine after 3 warm-up; figures are "
          f"the median over rounds of each round's median", flush=True)
    torch = Torch(args.threads)
    figures = {name: {"jetagent": [], "pytorch": [], "onnxruntime": []} for name, _ in models}
    for round_ in range(args.rounds):
        for name, path in models:
            figures[name]["jetagent"].append(time_jetagent(jetagent, path, args.threads, args.runs))
            figures[name]["pytorch"].append(torch.time(name, args.runs))
            if ort_version:
                ms, _ = time_ort(node_path, path, args.threads, args.runs, not args.no_spin)
                figures[name]["onnxruntime"].append(ms)
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'model':<16}{'jetagent ms':>12}{'pytorch ms':>12}{'onnxrt ms':>11}{'pytorch/jetagent':>18}"
          f"{'onnxrt/jetagent':>17}")
    for name, _ in models:
        ours = statistics.median(figures[name]["jetagent"])
        eager = statistics.median(figures[name]["pytorch"])
        ort = statistics.median(figures[name]["onnxruntime"]) if figures[name]["onnxruntime"] else None
        ort_text = f"{ort:>11.1f}" if ort else f"{'-':>11}"
        ratio = f"{ort / ours:>17.2f}" if ort else f"{'-':>17}"
        print(f"{name:<16}{ours:>12.1f}{eager:>12.1f}{ort_text}{eager / ours:>18.2f}{ratio}")
    if not ort_version:
        print("onnxruntime: not found (see --help for installing onnxruntime-node with npm)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
