#!/usr/bin/python3
"""The CPU engine against its peers on the CNNs, in one run: jetagent's xnnpack backend against ONNX
Runtime (and PyTorch eager on request) on the same exports, fp32 and int8, batch 1.

    /usr/bin/python3 tools/bench_cpu_peers.py [--set zoo|modern|video ...] [MODEL ...]
        [--ort DIR] [--threads 2] [--rounds 3] [--runs 10] [--warmup 3] [--pytorch] [--no-int8]
        [--calibration DIR] [--batchnorm folded|kept] [--cache-dir DIR] [--json FILE] [--quick]
        [--profile] [--missing-skips]

MODELs are exports of tools/export_torchvision.py in models/reference/, by default those with
BatchNorm folded (<model>.folded.onnx: the plain export users make; --fold-batchnorm there; both
engines fold BatchNorm themselves anyway, --batchnorm kept takes <model>.onnx). Without MODELs and
--set, every model of the three groups, whose geometric means are printed apart:
  zoo     the ten zoo models of the model-zoo tests (r3d_18, a video model, among them)
  modern  efficientnet_b0 efficientnet_v2_s regnet_y_800mf mobilenet_v3_large
  video   torchvision's video CNNs export_torchvision.py knows: r3d_18 mc3_18 r2plus1d_18 s3d
and over the zoo and the modern set together (the issue's fp32 goal). Each round times, per model,
the engines one after another, the first one taking turns from round to round:
  jetagent      fp32: `jetagent inspect MODEL --profile RUNS --threads N` (Session::run, median
                of RUNS after WARMUP runs)
  onnxruntime   tools/ort_time.js (npm's onnxruntime-node; all graph optimisations, N intra-op
                threads, workers spinning unless --no-spin): its output is checked against the
                export's PyTorch reference
  pytorch       with --pytorch: eager, torch.inference_mode(), N threads (Debian's torch runs
                linear layers on the reference BLAS: slow, and minutes for the big models)
  int8          image models: `jetagent compare MODEL --reference xnnpack:cpu:fp32
                --candidate xnnpack:cpu:int8 --calibration DIR`: both precisions in one process,
                alternating 32 inputs at a time on synthetic://shapes frames, giving the int8
                speed-up over the engine's own fp32, the top-1 agreement and the logits' relative
                error. Calibration images: --calibration DIR, else 64 frames of synthetic://shapes
                (seed 7) captured into a temporary directory. The ranges are cached in --cache-dir
                (default: a temporary directory), so only the first round calibrates.
ONNX Runtime int8 is not measured: its quantizer (onnxruntime.quantization) is Python, which
Debian does not package, and onnxruntime-node has none; a QDQ model could be timed like any other.
Printed: the configuration, each model's medians over rounds of each round's median, the spread
of the rounds ((max - min) / median), each ratio, the geometric means, and the models below 1.0x.

--profile instead times nothing side by side: per model, jetagent's own profile (`inspect
--profile RUNS`: per operator and library, the slowest steps) and ONNX Runtime's (its profiler's
trace, per operator type and the slowest nodes, over the timed runs), for finding where the time
goes. --quick: one round of 3 runs after 1 warm-up, int8 on 16 frames (a smoke test).
--missing-skips: a missing export exits 77 (skipped, for CTest) instead of 2.
Exit status: 0 done; 1 an engine failed or gave a wrong answer; 2 usage; 77 see --missing-skips.
Install ONNX Runtime (npm; Debian packages none; never a dependency of jetagent itself):
    npm install --prefix ~/.cache/jetagent-ort --ignore-scripts --no-audit --no-fund \\
        onnxruntime-node@1.30.0
    /usr/bin/python3 tools/bench_cpu_peers.py --ort ~/.cache/jetagent-ort ...
Without it its column is left out, and the output says so. Environment: JETAGENT (default
build/src/jetagent).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

import export_torchvision as exporter
from peer_timing import (REFERENCE, Torch, context, find_ort, geometric_mean, inspect_profile,
                         jetagent_binary, ort_run)

VIDEO = exporter.SETS["video"]
GROUPS = {"zoo": exporter.SETS["zoo"], "modern": exporter.SETS["modern"], "video": VIDEO}
GOAL = ("zoo", "modern")  # the fp32 goal's population: at least 1.15x ONNX Runtime in geometric mean
SKIP = 77


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", metavar="MODEL")
    parser.add_argument("--set", action="append", choices=list(GROUPS), help="a group of models (repeatable)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per engine, model and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs before each engine's timed ones")
    parser.add_argument("--ort", type=pathlib.Path, help="npm --prefix directory holding onnxruntime-node")
    parser.add_argument("--no-spin", action="store_true", help="ONNX Runtime's workers sleep between runs")
    parser.add_argument("--pytorch", action="store_true", help="also time PyTorch eager")
    parser.add_argument("--no-int8", action="store_true", help="leave int8 out")
    parser.add_argument("--calibration", type=pathlib.Path, help="int8 calibration images (a directory)")
    parser.add_argument("--batchnorm", choices=("folded", "kept"), default="folded",
                        help="which export: <model>.folded.onnx (default) or <model>.onnx")
    parser.add_argument("--cache-dir", type=pathlib.Path, help="engine cache for the int8 runs")
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures to this file")
    parser.add_argument("--quick", action="store_true", help="one round of 3 runs: a smoke test")
    parser.add_argument("--profile", action="store_true", help="where each engine's time goes, per model")
    parser.add_argument("--missing-skips", action="store_true", help="a missing export exits 77, not 2")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.runs, args.warmup = 1, 3, 1
    for name, value, least in (("--threads", args.threads, 1), ("--runs", args.runs, 1),
                               ("--rounds", args.rounds, 1), ("--warmup", args.warmup, 0)):
        if value < least:
            parser.error(f"{name} {value}: at least {least}")
    unknown = [m for m in args.models if m not in exporter.MODELS]
    if unknown:
        input_error(f"unknown model {' '.join(unknown)}; known: {' '.join(exporter.MODELS)}")
    names = [m for group in (args.set or ([] if args.models else list(GROUPS))) for m in GROUPS[group]]
    args.names = list(dict.fromkeys(names + args.models))
    suffix = ".folded" if args.batchnorm == "folded" else ""
    args.paths = {name: REFERENCE / f"{name}{suffix}.onnx" for name in args.names}
    missing = [str(p) for p in args.paths.values() if not p.exists()]
    if missing:
        fold = " --fold-batchnorm" if suffix else ""
        message = (f"{', '.join(missing)} missing: /usr/bin/python3 tools/export_torchvision.py{fold} "
                   f"{' '.join(n for n, p in args.paths.items() if not p.exists())} exports them")
        if args.missing_skips:
            print(f"bench_cpu_peers: skipped: {message}")
            sys.exit(SKIP)
        input_error(message)
    return parser, args


def input_error(message):
    """A wrong model name or a missing export: the message alone (argparse's error would bury it
    under the whole usage), exit status 2."""
    print(f"bench_cpu_peers.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def is_video(name):
    return name in VIDEO


def calibration_images(jetagent, work, frames):
    """A directory of `frames` synthetic://shapes frames (seed 7, not the inputs' seed)."""
    out = work / "calibration"
    done = subprocess.run([jetagent, "-q", "capture", "--source", "synthetic://shapes", "--seed", "7",
                           "-n", str(frames), "--out", str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"jetagent capture (calibration images): {done.stderr.strip()[-400:]}")
    return out


def time_int8(jetagent, model, args, calibration, cache_dir, out):
    """jetagent's int8 against its own fp32 in one `compare`: (fp32 ms, int8 ms, top-1, rel error)."""
    spec = f"xnnpack:cpu:{{}},threads={args.threads}"
    frames = 16 if args.quick else max(args.runs, 32)
    done = subprocess.run([jetagent, "-q", "compare", str(model), "--reference", spec.format("fp32"),
                           "--candidate", spec.format("int8"), "--calibration", str(calibration),
                           "--inputs", "synthetic://shapes", "--frames", str(frames), "--warmup",
                           str(args.warmup), "--cache-dir", str(cache_dir), "--json", str(out)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"jetagent compare {model.name} (int8): {done.stderr.strip()[-400:]}")
    doc = json.loads(out.read_text())
    output = doc["outputs"][0]
    return (doc["reference"]["latency_ms"]["median"], doc["candidate"]["latency_ms"]["median"],
            output.get("top1_agreement"), output.get("relative_error"))


def measure(jetagent, args, node_path, ort_version, work):
    """Every round's figures: figures[model][engine] is a list, one entry per round."""
    torch = Torch(args.threads) if args.pytorch else None
    calibration = None
    if not args.no_int8 and any(not is_video(n) for n in args.names):
        calibration = args.calibration or calibration_images(jetagent, work, 16 if args.quick else 64)
    cache_dir = args.cache_dir or work / "cache"
    figures = {name: {"jetagent": [], "onnxruntime": [], "pytorch": [], "int8": []} for name in args.names}
    for round_ in range(args.rounds):
        for name in args.names:
            path = args.paths[name]
            engines = [("jetagent", lambda: inspect_profile(jetagent, path, args.threads, args.runs,
                                                            args.warmup)["profile"]["run_median_ms"])]
            if ort_version:
                engines.append(("onnxruntime", lambda: ort_run(node_path, path, args.threads, args.runs,
                                                               not args.no_spin, args.warmup)["median_ms"]))
            if torch:
                stem = path.name[:-len(".onnx")]
                engines.append(("pytorch", lambda: torch.time(name, args.runs, args.warmup, stem)))
            if calibration and not is_video(name):
                json_out = work / f"{name}.int8.{round_}.json"
                engines.append(("int8", lambda: time_int8(jetagent, path, args, calibration, cache_dir,
                                                          json_out)))
            # The engine that goes first takes turns, so that a model's warm caches favour none.
            shift = round_ % len(engines)
            for engine, run in engines[shift:] + engines[:shift]:
                figures[name][engine].append(run())
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    return figures


def spread(values):
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def summarise(figures):
    """Per model: medians over rounds, spreads and ratios (None where an engine did not run)."""
    rows = {}
    for name, f in figures.items():
        row = {"jetagent_ms": statistics.median(f["jetagent"]), "jetagent_spread": spread(f["jetagent"])}
        for engine in ("onnxruntime", "pytorch"):
            row[f"{engine}_ms"] = statistics.median(f[engine]) if f[engine] else None
            row[f"{engine}_spread"] = spread(f[engine]) if f[engine] else None
            row[f"{engine}_ratio"] = row[f"{engine}_ms"] / row["jetagent_ms"] if f[engine] else None
        if f["int8"]:
            row["int8_fp32_ms"] = statistics.median(r[0] for r in f["int8"])
            row["int8_ms"] = statistics.median(r[1] for r in f["int8"])
            row["int8_spread"] = spread([r[1] for r in f["int8"]])
            row["int8_speedup"] = row["int8_fp32_ms"] / row["int8_ms"]
            row["int8_top1"] = min(r[2] for r in f["int8"]) if f["int8"][0][2] is not None else None
            row["int8_relative_error"] = max(r[3] for r in f["int8"])
        rows[name] = row
    return rows


def cell(value, width, digits=1, suffix=""):
    return f"{value:>{width - len(suffix)}.{digits}f}{suffix}" if value is not None else f"{'-':>{width}}"


def print_table(rows, args):
    print(f"\n{'model':<20}{'jetagent ms':>12}{'±':>6}{'onnxrt ms':>11}{'±':>6}{'ort/jet':>9}"
          + (f"{'pytorch ms':>12}{'pt/jet':>8}" if args.pytorch else "")
          + ("" if args.no_int8 else f"{'fp32 ms':>10}{'int8 ms':>10}{'±':>5}{'int8 x':>8}{'top-1':>8}"
             f"{'rel err':>9}"))
    for name, r in rows.items():
        line = (f"{name:<20}{cell(r['jetagent_ms'], 12, 2)}{cell(100 * r['jetagent_spread'], 6, 0, '%')}"
                f"{cell(r['onnxruntime_ms'], 11, 2)}"
                f"{cell(r['onnxruntime_spread'] and 100 * r['onnxruntime_spread'], 6, 0, '%')}"
                f"{cell(r['onnxruntime_ratio'], 9, 2, 'x')}")
        if args.pytorch:
            line += f"{cell(r['pytorch_ms'], 12, 1)}{cell(r['pytorch_ratio'], 8, 2, 'x')}"
        if not args.no_int8:
            if "int8_ms" in r:
                top1 = r["int8_top1"]
                line += (f"{cell(r['int8_fp32_ms'], 10, 2)}{cell(r['int8_ms'], 10, 2)}"
                         f"{cell(100 * r['int8_spread'], 5, 0, '%')}{cell(r['int8_speedup'], 8, 2, 'x')}"
                         f"{cell(top1 and 100 * top1, 8, 1, '%')}{r['int8_relative_error']:>9.3g}")
            else:
                line += f"{'(int8: compare feeds image models only)':>50}" if is_video(name) else ""
        print(line)


def print_means(rows, args):
    print()
    populations = {group: [n for n in GROUPS[group] if n in rows] for group in GROUPS}
    populations["+".join(GOAL)] = list(dict.fromkeys(n for g in GOAL for n in populations[g]))
    for label, names in populations.items():
        if not names:
            continue
        parts = []
        for key, title in (("onnxruntime_ratio", "onnxruntime/jetagent"), ("pytorch_ratio", "pytorch/jetagent"),
                           ("int8_speedup", "int8 speed-up over fp32")):
            values = [rows[n].get(key) for n in names if rows[n].get(key)]
            if values:
                parts.append(f"{title} {geometric_mean(values):.2f}x over {len(values)}")
        if parts:
            print(f"geometric mean, {label:<12} {'; '.join(parts)}")
    below = [f"{n} {r['onnxruntime_ratio']:.2f}x" for n, r in rows.items()
             if r["onnxruntime_ratio"] is not None and r["onnxruntime_ratio"] < 1.0]
    if any(r["onnxruntime_ratio"] is not None for r in rows.values()):
        print(f"below 1.0x ONNX Runtime (fp32): {', '.join(below) if below else 'none'}")


def ort_trace_summary(trace_path, warmup):
    """Per operator type: (nodes per run, mean ms per run) over the timed runs of ONNX Runtime's
    trace; and each node's mean ms, from its "<node>_kernel_time" events."""
    events = json.loads(pathlib.Path(trace_path).read_text())
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("cat") == "Session" and e.get("name") == "model_run")[warmup:]
    per_op, per_node = {}, {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        if not any(start <= e["ts"] <= end for start, end in runs):
            continue
        op = e.get("args", {}).get("op_name", "?")
        count, us = per_op.get(op, (0, 0))
        per_op[op] = (count + 1, us + e["dur"])
        node = e["name"][:-len("_kernel_time")]
        per_node[(node, op)] = per_node.get((node, op), 0) + e["dur"]
    n = max(len(runs), 1)
    return ({op: (count / n, us / n / 1e3) for op, (count, us) in per_op.items()},
            {key: us / n / 1e3 for key, us in per_node.items()})


def profile(jetagent, args, node_path, ort_version, work):
    for name in args.names:
        path = args.paths[name]
        print(f"\n== {name}: jetagent (`jetagent inspect {path.name} --profile {args.runs} --threads "
              f"{args.threads}`)", flush=True)
        done = subprocess.run([jetagent, "inspect", str(path), "--profile", str(args.runs), "--threads",
                               str(args.threads), "--warmup", str(args.warmup)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"jetagent inspect {name}: {done.stderr.strip()[-400:]}")
        print(done.stdout[done.stdout.index("\nprofile"):].strip("\n"))
        if not ort_version:
            print("onnxruntime: not found (see --help)")
            continue
        result = ort_run(node_path, path, args.threads, args.runs, not args.no_spin, args.warmup,
                         work / name)
        traces = sorted(work.glob(f"{name}_*.json"))
        if not traces:
            raise RuntimeError(f"onnxruntime wrote no profile for {name} in {work}")
        per_op, per_node = ort_trace_summary(traces[-1], args.warmup)
        total = sum(ms for _, ms in per_op.values())
        print(f"\n== {name}: onnxruntime {result['version']} (its profiler; run median {result['median_ms']:.3f} "
              f"ms with profiling on; the nodes' mean times add up to {total:.3f} ms)")
        print(f"  {'operator':<28} {'nodes':>6} {'mean ms':>10} {'share':>7}")
        for op, (count, ms) in sorted(per_op.items(), key=lambda item: -item[1][1]):
            print(f"  {op:<28} {count:6.0f} {ms:10.3f} {100 * ms / total:6.1f}%")
        print("  slowest nodes:")
        for (node, op), ms in sorted(per_node.items(), key=lambda item: -item[1])[:15]:
            print(f"  {ms:8.3f} ms  {op:<20} {node}")


def main():
    parser, args = parse_arguments()
    jetagent = jetagent_binary(parser)
    node_path, ort_version = find_ort(parser, args.ort)
    print(context(args.threads, ort_version), flush=True)
    version = subprocess.run([jetagent, "--version"], capture_output=True, text=True).stdout.strip()
    backend = subprocess.run([jetagent, "backends"], capture_output=True, text=True).stdout
    print(f"jetagent: {version.splitlines()[0] if version else '?'}; "
          f"{next((l.strip() for l in backend.splitlines() if l.startswith('xnnpack')), 'xnnpack: ?')}")
    timing = (f"--profile: one profiled run of {args.runs} timed runs per engine after {args.warmup} warm-up"
              if args.profile else
              f"{args.rounds} round{'s' if args.rounds != 1 else ''} of {args.runs} timed runs per engine after "
              f"{args.warmup} warm-up; figures are the median over rounds of each round's median, ± the rounds' spread")
    print(f"batch 1; exports {'<model>.folded.onnx' if args.batchnorm == 'folded' else '<model>.onnx'} in "
          f"{REFERENCE}; {timing}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_cpu_peers.") as temporary:
        work = pathlib.Path(temporary)
        try:
            if args.profile:
                profile(jetagent, args, node_path, ort_version, work)
                return 0
            figures = measure(jetagent, args, node_path, ort_version, work)
        except RuntimeError as e:
            print(f"bench_cpu_peers: {e}", file=sys.stderr)
            return 1
    if not args.no_int8:
        source = args.calibration or "64 synthetic://shapes frames (seed 7)"
        print(f"int8: xnnpack int8 against xnnpack fp32 in one `jetagent compare` per round "
              f"({16 if args.quick else max(args.runs, 32)} synthetic://shapes inputs), calibrated on "
              f"{'16 frames' if args.quick and not args.calibration else source}; top-1 is the agreement "
              f"with fp32 (worst round), rel err the logits' (max |int8 - fp32| / max |fp32|)")
    rows = summarise(figures)
    print_table(rows, args)
    print_means(rows, args)
    if not ort_version:
        print("onnxruntime: not found (see --help for installing onnxruntime-node with npm)")
    if args.json:
        args.json.write_text(json.dumps({"context": context(args.threads, ort_version), "threads": args.threads,
                                         "rounds": args.rounds, "runs": args.runs, "figures": figures,
                                         "summary": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
