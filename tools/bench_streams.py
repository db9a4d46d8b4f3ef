#!/usr/bin/python3
"""Several camera streams through one batched engine against one batch-1 engine per stream.

    /usr/bin/python3 tools/bench_streams.py [--streams 1,2,4,8] [--duration 20] [--warmup 3]
        [--rounds 1] [--model PATH] [--preprocess auto|imagenet|shapes] [--engine SPEC]
        [--threads 0] [--size 640x480] [--fps 30] [--cache-dir DIR] [--keep DIR] [--quick]

For each N of --streams, N synthetic://shapes streams (--size at --fps, each its own seed) go
through --model (default: models/reference/mobilenet_v2.folded.onnx) in one `jetagent run`, in
two modes, alternated within each round (batched then separate, then the other way round):
  batched   one task serving every stream through one engine of batch N: each inference takes
            the newest frame of each stream (the agent's multi-stream batching)
  separate  N tasks, each serving one stream (`streams: [sK]`) through its own engine of batch 1,
            in the same process
Both use the same engine (--engine BACKEND:DEVICE:PRECISION, default xnnpack:cpu:fp32, the CPU
engine; tests/device/validate-tensorrt.sh --streams passes tensorrt:gpu:fp16) and --threads per
engine (0: the backend's default; each separate engine gets as many). The configs are written to a
scratch directory (--keep DIR keeps them and the runs' logs there).

Each run is measured over a window of --duration seconds that opens --warmup seconds after every
task has logged its first frame, so engine builds and the first inferences stay out:
  fps/stream  frames logged per stream with a capture time in the window, over its length; the
              lowest stream's
  drops       frames replaced by newer ones before inference (gaps in each stream's frame_id)
              plus failed frames, in the window, all streams
  p50, p99    end-to-end latency (capture to result) of the window's ok, warm frames, all streams
              together, nearest rank (the run summary's definition)
  CPU/frame   the process's CPU time (every thread; /proc/PID/stat) over the window, per frame
  RSS         the run's peak resident memory (summary.json's process.peak_rss_mb), its engines
              loaded from the engine cache: before the rounds, a priming run of each engine (batch
              N, batch 1) prepares it (TensorRT: builds its plan) and stops once frames flow
  held        every stream at least 98% of --fps and no drop or failure in the window
With several --rounds a row gives the median of the rounds' figures, the most drops, and held
only when every round held.

The headline: per mode the largest N held (that N and every smaller one held), CPU per frame
batched against separate at each N, and the memory each added stream costs batched (the rise of
the batched runs' RSS from the smallest to the largest N, per stream added) against what a
separate engine costs (the same rise of the separate runs), with the issue's goals for them.

The model comes from the export the CI's test stage runs (tools/dev.sh):
    /usr/bin/python3 tools/export_torchvision.py --fold-batchnorm mobilenet_v2
--preprocess auto takes the small demo model's (firmware-config/demo.yaml) for a file named
shapes_cnn*.onnx and torchvision's ImageNet evaluation transform (firmware-config/
bench-mobilenet_v2.yaml's) for any other. --quick is a smoke run (N = 1, 2; 3 s, 1 s warm-up) for
CTest; its figures mean nothing. Exit status: 0 when every run was measured, 1 when one failed
(its output's end is printed), 2 on a usage error or a missing model. Environment: JETAGENT (default
build/src/jetagent).
"""
import argparse
import csv
import json
import math
import os
import pathlib
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "models" / "reference" / "mobilenet_v2.folded.onnx"
MODES = ("batched", "separate")
HELD_SHARE = 0.98  # of --fps: a window's edge moves a stream's count by one frame, not by 2%
POLL_S = 0.05

# The tasks' preprocessing, as the configs that use each model give it.
PREPROCESS = {
    # firmware-config/bench-mobilenet_v2.yaml: Resize(256), CenterCrop(224), ImageNet mean/std.
    "imagenet": {"resize": "shorter_side", "resize_size": 256, "crop": 224, "interpolation": "linear"},
    # firmware-config/demo.yaml: the whole frame squeezed to 64x64, as the model was trained.
    "shapes": {"resize": "stretch", "crop": 64, "interpolation": "area", "color": "rgb", "divisor": 255,
               "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
}
POSTPROCESS = {"imagenet": {"top_k": 5}, "shapes": {"output": "logits", "top_k": 3, "smoothing": 0}}


class RunFailed(Exception):
    pass


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--streams", default="1,2,4,8", help="the Ns, comma-separated (1,2,4,8)")
    p.add_argument("--duration", type=float, default=20.0, help="measured seconds per run (20)")
    p.add_argument("--warmup", type=float, default=3.0,
                   help="seconds after every task's first frame before the window opens (3)")
    p.add_argument("--rounds", type=int, default=1, help="rounds of every configuration (1)")
    p.add_argument("--model", type=pathlib.Path, default=DEFAULT_MODEL)
    p.add_argument("--preprocess", choices=("auto", *PREPROCESS), default="auto")
    p.add_argument("--engine", default="xnnpack:cpu:fp32", help="BACKEND:DEVICE:PRECISION")
    p.add_argument("--threads", type=int, default=0, help="threads per engine (0: the backend's default)")
    p.add_argument("--size", default="640x480", help="each stream's frame size (640x480)")
    p.add_argument("--fps", type=float, default=30.0, help="each stream's rate (30)")
    p.add_argument("--cache-dir", type=pathlib.Path,
                   help="engine.cache_dir (default: the engine's own, ~/.cache/jetagent)")
    p.add_argument("--startup-timeout", type=float, default=600.0,
                   help="seconds a run may take to log every task's first frame (600; engine builds)")
    p.add_argument("--keep", type=pathlib.Path, help="write configs and run logs here, and keep them")
    p.add_argument("--quick", action="store_true", help="a smoke run: N = 1,2, 3 s, 1 s warm-up")
    p.add_argument("--jetagent", default=os.environ.get("JETAGENT", str(ROOT / "build/src/jetagent")))
    args = p.parse_args()
    if args.quick:
        args.streams, args.duration, args.warmup = "1,2", 3.0, 1.0
    try:
        args.ns = sorted({int(n) for n in args.streams.split(",")})
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error("--streams takes whole numbers separated by commas, --size WIDTHxHEIGHT")
    if not args.ns or args.ns[0] < 1 or args.ns[-1] > 64:
        p.error("--streams: each N between 1 and 64")
    if args.duration <= 0 or args.warmup < 0 or args.rounds < 1 or args.fps <= 0 or args.threads < 0:
        p.error("--duration and --fps must be positive, --warmup and --threads not negative, "
                "--rounds at least 1")
    parts = args.engine.split(":")
    if len(parts) != 3 or not all(parts):
        p.error("--engine is BACKEND:DEVICE:PRECISION (xnnpack:cpu:fp32, tensorrt:gpu:fp16)")
    args.backend, args.device, args.precision = parts
    if not shutil.which(args.jetagent):
        p.error(f"no jetagent at {args.jetagent} (build it, or give --jetagent / JETAGENT)")
    if not args.model.is_file():
        print(f"bench_streams.py: no model at {args.model}.\n"
              "  Export it (PyTorch and torchvision from Debian, as the CI's test stage does):\n"
              "    /usr/bin/python3 tools/export_torchvision.py --fold-batchnorm mobilenet_v2\n"
              "  or give another ONNX classifier with --model PATH.", file=sys.stderr)
        sys.exit(2)
    args.model = args.model.resolve()
    if args.preprocess == "auto":
        args.preprocess = "shapes" if args.model.name.startswith("shapes_cnn") else "imagenet"
    return args


def stream_names(n):
    return [f"s{k}" for k in range(n)]


def config_for(args, n, mode, duration_cap_s):
    """One run's config as JSON, which is YAML too: N sources, and the mode's tasks."""
    engine = {"backend": args.backend, "device": args.device, "precision": args.precision,
              "threads": args.threads}
    if args.cache_dir:
        engine["cache_dir"] = str(args.cache_dir.resolve())
    names = stream_names(n)

    def task(name, streams, batch):
        return {"name": name, "type": "classification", "model": str(args.model), "streams": streams,
                "engine": {**engine, "batch": batch}, "preprocess": PREPROCESS[args.preprocess],
                "postprocess": POSTPROCESS[args.preprocess]}

    tasks = ([task("batched", names, n)] if mode == "batched"
             else [task(f"engine{k}", [s], 1) for k, s in enumerate(names)])
    return {
        "sources": [{"name": s, "uri": "synthetic://shapes", "width": args.width, "height": args.height,
                     "fps": args.fps, "seed": k + 1} for k, s in enumerate(names)],
        # A bound in case this script dies: it stops the run itself (SIGTERM) long before.
        "run": {"duration_s": duration_cap_s},
        "tasks": tasks,
        "logging": {"csv": True, "jsonl": False, "status_interval_s": 0},
    }


def cpu_seconds(pid):
    """The process's user + system time, every thread's, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def frame_csvs(run_dir, task):
    """A task's frame CSV segments in order: <task>.frames.csv, then <task>.frames_NNNNNN.csv."""
    first = sorted(run_dir.glob(f"{task}.frames.csv"))
    return first + sorted(run_dir.glob(f"{task}.frames_[0-9]*.csv"))


def has_frame(path):
    try:
        with open(path, "rb") as f:
            return f.read(65536).count(b"\n") >= 2  # the header and one frame
    except OSError:
        return False


def tail_of(path, lines=12):
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run_once(args, n, mode, work, label, measure=True):
    """Runs one configuration; its figures over the measured window, or RunFailed. Without
    `measure`, stops it once its frames flow (its engines are built and cached)."""
    here = work / label
    here.mkdir(parents=True)
    cap = args.startup_timeout + args.warmup + args.duration + 120
    config = config_for(args, n, mode, cap)
    (here / "config.yaml").write_text(json.dumps(config, indent=2) + "\n")
    tasks = [t["name"] for t in config["tasks"]]
    logs = here / "logs"
    with open(here / "output.txt", "wb") as out:
        proc = subprocess.Popen([args.jetagent, "run", "-c", str(here / "config.yaml"), "-o", str(logs)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        # Every task has logged a frame: the engines are built and the streams flow.
        deadline = time.monotonic() + args.startup_timeout
        run_dir = None
        while True:
            if proc.poll() is not None:
                raise RunFailed(f"jetagent exited ({proc.returncode}) before every task logged a frame")
            if time.monotonic() > deadline:
                raise RunFailed(f"no frame from every task within {args.startup_timeout:.0f} s")
            dirs = [d for d in logs.glob("*") if d.is_dir()] if logs.is_dir() else []
            if dirs:
                run_dir = dirs[0]
                if all(has_frame(run_dir / f"{t}.frames.csv") for t in tasks):
                    break
            time.sleep(POLL_S)
        if not measure:
            proc.send_signal(signal.SIGTERM)
            if proc.wait(timeout=120) != 0:
                raise RunFailed(f"jetagent exited with status {proc.returncode} after SIGTERM")
            return None
        time.sleep(args.warmup)
        t0, cpu0 = time.monotonic_ns(), cpu_seconds(proc.pid)
        time.sleep(args.duration)
        t1, cpu1 = time.monotonic_ns(), cpu_seconds(proc.pid)
        if proc.poll() is not None:
            raise RunFailed(f"jetagent exited ({proc.returncode}) during the measured window")
        proc.send_signal(signal.SIGTERM)  # drains the frames in flight and writes the summary
        if proc.wait(timeout=120) != 0:
            raise RunFailed(f"jetagent exited with status {proc.returncode} after SIGTERM")
    except RunFailed as e:
        raise RunFailed(f"{label}: {e}; its output ends:\n{tail_of(here / 'output.txt')}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    summary = json.loads((run_dir / "summary.json").read_text())
    figures = window_figures(run_dir, tasks, t0, t1)
    frames = sum(figures["per_stream"][s]["frames"] for s in figures["per_stream"])
    missing = [s for s in stream_names(n) if s not in figures["per_stream"]]
    if missing or frames == 0:
        raise RunFailed(f"{label}: no frame in the measured window from {', '.join(missing) or 'any stream'}")
    engines = [e for t in summary.get("tasks", []) for e in t.get("engines", [])]
    seconds = (t1 - t0) / 1e9
    fps = min(figures["per_stream"][s]["frames"] / seconds for s in stream_names(n))
    drops = sum(v["dropped"] + v["failed"] for v in figures["per_stream"].values())
    return {
        "fps": fps,
        "drops": drops,
        "p50": nearest_rank(figures["e2e"], 50),
        "p99": nearest_rank(figures["e2e"], 99),
        "samples": len(figures["e2e"]),
        "cpu_ms": (cpu1 - cpu0) * 1e3 / frames,
        "rss": (summary.get("process") or {}).get("peak_rss_mb") or math.nan,
        "held": fps >= HELD_SHARE * args.fps and drops == 0,
        "engines": f"{len(engines)}x{engines[0].get('threads', '?')}" if engines else "?",
        "timeout_ms": next((t["batching"]["timeout_ms"] for t in summary.get("tasks", []) if "batching" in t),
                           None),
    }


def window_figures(run_dir, tasks, t0, t1):
    """Per stream the frames, drops and failures with a capture time in [t0, t1), and the window's
    steady end-to-end latencies, from the tasks' frame CSVs."""
    per_stream, e2e = {}, []
    for task in tasks:
        by_stream = {}
        for path in frame_csvs(run_dir, task):
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    try:
                        by_stream.setdefault(row.get("stream") or task, []).append(
                            (int(row["frame_id"]), int(row["capture_ns"]), row))
                    except (KeyError, TypeError, ValueError):
                        continue  # a line a stop cut short
        for stream, rows in by_stream.items():
            rows.sort(key=lambda r: r[0])
            s = per_stream.setdefault(stream, {"frames": 0, "dropped": 0, "failed": 0})
            previous = None
            for frame_id, capture, row in rows:
                inside = t0 <= capture < t1
                if inside and previous is not None:
                    s["dropped"] += max(0, frame_id - previous - 1)
                previous = frame_id
                if not inside:
                    continue
                if row.get("ok") != "1":
                    s["failed"] += 1
                    continue
                s["frames"] += 1
                if row.get("cold_start") != "1":
                    e2e.append(float(row["e2e_ms"]))
    return {"per_stream": per_stream, "e2e": e2e}


def nearest_rank(values, percent):
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def combine(rounds):
    """Rounds of one configuration as one row: medians, the most drops, held only when all held."""
    def median(key):
        values = [r[key] for r in rounds if not math.isnan(r[key])]
        return statistics.median(values) if values else math.nan
    return {"fps": median("fps"), "drops": max(r["drops"] for r in rounds), "p50": median("p50"),
            "p99": median("p99"), "cpu_ms": median("cpu_ms"), "rss": median("rss"),
            "held": all(r["held"] for r in rounds), "engines": rounds[0]["engines"],
            "samples": min(r["samples"] for r in rounds), "timeout_ms": rounds[0]["timeout_ms"]}


def context(args):
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    board = ""
    try:
        board = pathlib.Path("/proc/device-tree/model").read_text().strip("\0\n ")
    except OSError:
        pass
    memory = "?"
    try:
        kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
        memory = f"{kib / 1048576:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    version = subprocess.run([args.jetagent, "--version"], capture_output=True, text=True).stdout.strip()
    print("== jetagent: several streams, one batched engine against one engine per stream ==")
    print(f"machine    {platform.machine()}, {cpu}, {os.cpu_count()} cores, {memory}"
          f"{', ' + board if board else ''}; Linux {platform.release()}")
    print(f"load       {' '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min) at start")
    print(f"jetagent   {args.jetagent} ({version})")
    print(f"model      {args.model} ({args.model.stat().st_size / 1e6:.1f} MB), "
          f"preprocess {args.preprocess}")
    print(f"engine     {args.backend} on {args.device}, {args.precision}, threads per engine "
          f"{args.threads or 'the backend default'}; cache {args.cache_dir or 'the engine default'}")
    print(f"streams    synthetic://shapes {args.width}x{args.height} at {args.fps:g} fps each, seeds 1..N; "
          f"N = {', '.join(map(str, args.ns))}")
    print(f"measured   {args.duration:g} s per run after {args.warmup:g} s of warm-up, {args.rounds} "
          f"round(s), modes alternated; held = every stream >= {HELD_SHARE * args.fps:.1f} fps "
          f"and no drop")
    print(f"started    {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    print()


def number(value, digits=1):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def report(args, rows):
    fmt = "{:>3} {:<9} {:>9} {:>10} {:>6} {:>9} {:>9} {:>10} {:>9} {:>5}"
    print(fmt.format("N", "mode", "engines", "fps/strm", "drops", "p50 ms", "p99 ms", "CPU ms/fr",
                     "RSS MiB", "held"))
    for n in args.ns:
        for mode in MODES:
            r = rows.get((n, mode))
            if r is None:
                print(fmt.format(n, mode, "failed", *("-",) * 7))
                continue
            print(fmt.format(n, mode, r["engines"], number(r["fps"]), r["drops"], number(r["p50"]),
                             number(r["p99"]), number(r["cpu_ms"], 2), number(r["rss"]),
                             "yes" if r["held"] else "no"))
    timeouts = {r["timeout_ms"] for r in rows.values() if r["timeout_ms"] is not None}
    fewest = min((r["samples"] for r in rows.values()), default=0)
    print("(engines: engines x threads each, as the run summary gives them; batch timeout "
          f"{', '.join(f'{t:.1f}' for t in sorted(timeouts)) or '-'} ms; the fewest latency samples "
          f"in a row: {fewest}{', too few for p99 (662 wanted)' if fewest < 662 else ''})")
    print()

    def largest_held(mode):
        best = None
        for n in args.ns:
            r = rows.get((n, mode))
            if not r or not r["held"]:
                break
            best = n
        return best

    held = {mode: largest_held(mode) for mode in MODES}
    print(f"largest N held at {args.fps:g} fps with no drop: batched {held['batched'] or 'none'}, "
          f"separate {held['separate'] or 'none'}")
    ratios = []
    for n in args.ns:
        b, s = rows.get((n, "batched")), rows.get((n, "separate"))
        if b and s and s["cpu_ms"] > 0:
            ratios.append((n, b["cpu_ms"] / s["cpu_ms"]))
            print(f"  N={n}: CPU per frame batched {b['cpu_ms']:.2f} ms, separate {s['cpu_ms']:.2f} ms "
                  f"(batched/separate {ratios[-1][1]:.2f})")
    low, high = args.ns[0], args.ns[-1]
    slope = {}
    for mode in MODES:
        a, b = rows.get((low, mode)), rows.get((high, mode))
        if high > low and a and b and not math.isnan(a["rss"]) and not math.isnan(b["rss"]):
            slope[mode] = (b["rss"] - a["rss"]) / (high - low)
    if len(slope) == 2:
        share = slope["batched"] / slope["separate"] if slope["separate"] > 0 else math.nan
        print(f"RSS per added stream, N={low} to {high}: batched {slope['batched']:.1f} MiB, a separate "
              f"engine {slope['separate']:.1f} MiB (batched/separate {number(share, 2)})")
    else:
        share = math.nan
        print("RSS per added stream: needs two Ns measured in both modes")
    print()
    print("goals (the issue's, for a 2-core development VM):")
    goal = lambda ok: "MET" if ok else "NOT MET"
    hb, hs = held["batched"] or 0, held["separate"] or 0
    print(f"  batched holds as many streams as separate engines ({hb} vs {hs}): {goal(hb >= hs)}")
    multi = [(n, r) for n, r in ratios if n > 1]
    print(f"  less CPU per frame batched at every N > 1 "
          f"({', '.join(f'{r:.2f}' for _, r in multi) or '-'}): {goal(multi and all(r < 1 for _, r in multi))}")
    print(f"  an added stream costs under a third of a separate engine's RSS ({number(share, 2)}): "
          f"{goal(share < 1 / 3)}")


def main():
    sys.stdout.reconfigure(line_buffering=True)  # the header before the progress lines on stderr
    args = parse_args()
    context(args)
    work = args.keep.resolve() if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="jetagent-streams."))
    work.mkdir(parents=True, exist_ok=True)
    measured, failed = {}, set()
    try:
        # Each engine (batch N, and batch 1 for the separate ones) prepared into the cache first,
        # so that no measured run's peak memory holds a preparation or a TensorRT build.
        primes = [(n, "batched") for n in args.ns] + ([] if 1 in args.ns else [(args.ns[0], "separate")])
        for n, mode in primes:
            print(f"-- n{n}-{mode}-prime", file=sys.stderr, flush=True)
            try:
                run_once(args, n, mode, work, f"n{n}-{mode}-prime", measure=False)
            except RunFailed as e:
                print(f"bench_streams.py: {e}", file=sys.stderr)
        for i, n in enumerate(args.ns):
            for r in range(args.rounds):
                # Alternated within and across rounds and Ns, so that neither mode always goes first.
                order = MODES if (i + r) % 2 == 0 else MODES[::-1]
                for mode in order:
                    label = f"n{n}-{mode}-r{r + 1}"
                    print(f"-- {label}", file=sys.stderr, flush=True)
                    try:
                        measured.setdefault((n, mode), []).append(run_once(args, n, mode, work, label))
                    except RunFailed as e:
                        failed.add((n, mode))
                        print(f"bench_streams.py: {e}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    rows = {key: combine(v) for key, v in measured.items()}
    for key in failed & rows.keys():
        rows[key]["held"] = False  # a round that could not be measured held nothing
    report(args, rows)
    if args.keep:
        print(f"\nconfigs and run logs kept in {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
