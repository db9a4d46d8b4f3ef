"""Timing jetagent and its peers (ONNX Runtime from npm, PyTorch eager) on export_torchvision.py's
exports, one engine at a time: the parts tools/bench_transformers.py and tools/bench_cpu_peers.py
share. Not a program; see those two.

ONNX Runtime is npm's onnxruntime-node (Debian packages none), run by tools/ort_time.js and found
under --ort DIR/node_modules or NODE_PATH:
    npm install --prefix ~/.cache/jetagent-ort --ignore-scripts --no-audit --no-fund \\
        onnxruntime-node@1.30.0
"""
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "models" / "reference"
sys.path.insert(0, str(ROOT / "tools"))


def first_line(path, prefix=""):
    """The first line of `path` starting with `prefix` (its text after the first ':' when a prefix is
    given), or '?' where there is none or the file cannot be read."""
    try:
        with open(path) as f:
            line = next(l for l in f if l.startswith(prefix))
        return (line.split(":", 1)[1] if prefix else line).strip()
    except (OSError, StopIteration, IndexError):
        return "?"


def context(threads, ort_version):
    """One line: the CPU, governor, load, threads and the peers' versions the figures depend on."""
    cpu = first_line("/proc/cpuinfo", "model name")
    governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
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


def jetagent_binary(parser):
    """JETAGENT or build/src/jetagent; a usage error when it is not an executable."""
    jetagent = os.environ.get("JETAGENT", str(ROOT / "build" / "src" / "jetagent"))
    if not os.access(jetagent, os.X_OK):
        parser.error(f"{jetagent} is not an executable: build jetagent first (tools/dev.sh build), "
                     "or set JETAGENT to the binary")
    return jetagent


def find_ort(parser, ort_dir):
    """(NODE_PATH, ONNX Runtime's version or None). --ort DIR that does not load is a usage error;
    without --ort, NODE_PATH is tried and a missing ONNX Runtime is None."""
    node_path = str(ort_dir / "node_modules") if ort_dir else os.environ.get("NODE_PATH", "")
    if not node_path:
        return node_path, None
    probe = subprocess.run(["node", "-e", "console.log(require('onnxruntime-node').env.versions.common)"],
                           capture_output=True, text=True, env=dict(os.environ, NODE_PATH=node_path))
    version = probe.stdout.strip() if probe.returncode == 0 else None
    if ort_dir and not version:
        # Asked for by name: an install that does not load is an error, not a column left out.
        errors = [line for line in probe.stderr.splitlines() if "Error" in line] or ["no error text"]
        parser.error(f"--ort {ort_dir}: node cannot load onnxruntime-node from {node_path} "
                     f"({errors[0].strip()}); see --help for installing it")
    return node_path, version


def inspect_profile(jetagent, model, threads, runs, warmup=3, extra=()):
    """`jetagent inspect MODEL --profile RUNS --json`'s document (the xnnpack backend's Session::run)."""
    command = [jetagent, "inspect", str(model), "--profile", str(runs), "--threads", str(threads),
               "--warmup", str(warmup), "--json", *extra]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"jetagent inspect {model.name}: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)


def time_jetagent(jetagent, model, threads, runs, warmup=3):
    """The median of RUNS runs after WARMUP, in ms."""
    return inspect_profile(jetagent, model, threads, runs, warmup)["profile"]["run_median_ms"]


def ort_run(node_path, model, threads, runs, spin, warmup=3, profile_prefix=None):
    """tools/ort_time.js's JSON object; an output off the reference by more than 1e-3 relative is an
    error, so that a wrong run is never timed unnoticed."""
    env = dict(os.environ, NODE_PATH=node_path)
    command = ["node", str(ROOT / "tools" / "ort_time.js"), str(model), "1", str(threads), str(runs),
               str(warmup), "1" if spin else "0"]
    if profile_prefix:
        command.append(str(profile_prefix))
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-400:])
    result = json.loads(out.stdout)
    if result["relative_error"] > 1e-3:
        raise RuntimeError(f"onnxruntime's output on {model.name} is off by {result['relative_error']:.3g} "
                           f"relative")
    return result


def time_ort(node_path, model, threads, runs, spin, warmup=3):
    """(median ms, ONNX Runtime's version)."""
    result = ort_run(node_path, model, threads, runs, spin, warmup)
    return result["median_ms"], result["version"]


def geometric_mean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


class Torch:
    """PyTorch eager on the export's weights (export_torchvision.py's build, same seed) and input."""

    def __init__(self, threads):
        import torch
        import torchvision
        import export_torchvision as exporter
        self.torch, self.torchvision, self.exporter = torch, torchvision, exporter
        torch.set_num_threads(threads)
        self.models = {}

    def time(self, name, runs, warmup=3, stem=None):
        import numpy
        if name not in self.models:
            args = self.exporter.parse_arguments([name])
            model, _ = self.exporter.build(name, args, self.torch, self.torchvision)
            shape = (1, *self.exporter.MODELS[name].shape)
            data = numpy.fromfile(REFERENCE / f"{stem or name}.b1.input.f32", dtype="<f4")
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
