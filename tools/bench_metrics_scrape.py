#!/usr/bin/env python3
"""What a Prometheus scrape of /metrics costs a run, measured.

Runs `jetagent run --serve` on the demo model (synthetic source at FPS, STREAMS streams, one task
over them, a fixture Orin Nano's rails so the power families are there too) ROUNDS times
without and ROUNDS times with a scraper reading /metrics at RATE Hz (alternating, so drift of the
machine falls on both alike), then prints, beside the configuration:
  - the CPU time of one scrape, on the server's answering thread (/api/status
    http.metrics_cpu_s / http.metrics_scrapes: building the families under the statistics' lock
    and writing the text), and the exposition's size;
  - each side's median fps and p99 end to end (summary.json), and their ratio.

    tools/bench_metrics_scrape.py [--jetagent build/src/jetagent] [--seconds 20] [--fps 30]
        [--streams 1] [--rate 1] [--rounds 3] [--keep]
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def config_text(out, name, args):
    streams = "\n".join(
        f'  - {{name: s{i}, uri: "synthetic://shapes", width: 320, height: 240, fps: {args.fps}, '
        f"seed: {5 + i}}}"
        for i in range(args.streams))
    return (f"sources:\n{streams}\n"
            f"run: {{duration_s: {args.seconds}}}\n"
            "tasks:\n  - name: shapes\n"
            f"    model: {SOURCE}/models/shapes_cnn.onnx\n"
            f"    labels: {SOURCE}/models/shapes_labels.txt\n"
            "    preprocess: {resize: stretch, interpolation: area}\n"
            f"    engine: {{batch: {args.streams}}}\n"
            f"    deadline_ms: 40\n"
            f"logging: {{dir: {out}/logs-{name}, status_interval_s: 0}}\n"
            f'power: {{sysfs_root: "{out}/board"}}\n'
            'http: {listen: "127.0.0.1:0"}\n')


def one_run(args, out, name, scrape):
    path = os.path.join(out, name + ".yaml")
    with open(path, "w") as f:
        f.write(config_text(out, name, args))
    log = os.path.join(out, name + ".log")
    with open(log, "w") as logf:
        proc = subprocess.Popen([args.jetagent, "run", "-c", path], stdout=logf,
                                stderr=subprocess.STDOUT)
        url = None
        while not url and proc.poll() is None:
            time.sleep(0.1)
            with open(log) as f:
                m = re.search(r"live view on (http://\S+)", f.read())
            url = m.group(1) if m else None
        if not url:
            sys.exit("jetagent did not serve: see " + log)
        sizes, stop = [], threading.Event()

        def scraper():
            period = 1.0 / args.rate
            next_at = time.monotonic()
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(url + "metrics", timeout=5) as r:
                        sizes.append(len(r.read()))
                except OSError:
                    return
                next_at += period
                stop.wait(max(0.0, next_at - time.monotonic()))

        thread = threading.Thread(target=scraper) if scrape else None
        if thread:
            thread.start()
        status = None
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(url + "api/status", timeout=5) as r:
                    status = json.load(r)
            except OSError:
                pass
            time.sleep(1)
        stop.set()
        if thread:
            thread.join()
        if proc.wait() != 0:
            sys.exit(f"jetagent exited with status {proc.returncode}: see {log}")
    logs = os.path.join(out, "logs-" + name)
    run = sorted(os.listdir(logs))[-1]
    with open(os.path.join(logs, run, "summary.json")) as f:
        task = json.load(f)["tasks"][0]
    http = (status or {}).get("http", {})
    return {"fps": task["throughput_fps"], "p99": task["latency_ms"]["end_to_end"]["p99"],
            "scrapes": http.get("metrics_scrapes", 0), "cpu_s": http.get("metrics_cpu_s", 0.0),
            "bytes": statistics.median(sizes) if sizes else 0,
            }


def host_cpu():
    """This machine's CPU (the run's context names the fixture board's)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f", {os.cpu_count()} CPUs"
    except OSError:
        pass
    return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jetagent", default=os.path.join(SOURCE, "build/src/jetagent"))
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--streams", type=int, default=1)
    p.add_argument("--rate", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--keep", action="store_true", help="keep the runs' directories")
    args = p.parse_args()
    out = tempfile.mkdtemp(prefix="jetagent-scrape-")
    subprocess.run([args.jetagent, "-q", "power", "--fixture", "orin-nano-jp6", "--sysfs-root",
                    out + "/board", "-d", "0.2"], check=True, stdout=subprocess.DEVNULL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    plain, scraped = [], []
    try:
        for r in range(args.rounds):
            plain.append(one_run(args, out, f"plain{r}", False))
            scraped.append(one_run(args, out, f"scraped{r}", True))
    finally:
        if args.keep:
            print("runs kept in", out)
        else:
            shutil.rmtree(out, ignore_errors=True)
    scrapes = sum(s["scrapes"] for s in scraped)
    cpu = sum(s["cpu_s"] for s in scraped)
    med = lambda runs, key: statistics.median(x[key] for x in runs)  # noqa: E731
    print(f"config: {args.streams} stream(s) of synthetic://shapes 320x240 at {args.fps} fps, the "
          f"demo model (batch {args.streams}), fixture orin-nano-jp6 rails, {args.seconds} s runs, "
          f"{args.rounds} rounds each way, scraping /metrics at {args.rate:g} Hz; "
          f"host CPU: {host_cpu()}")
    print(f"scrape: {scrapes} scrapes, {1e3 * cpu / max(scrapes, 1):.3f} ms CPU each "
          f"(the answering thread), {med(scraped, 'bytes') / 1024:.1f} KiB of text 0.0.4; "
          f"{100 * cpu / max(1, args.rounds * args.seconds):.4f}% of a core at {args.rate:g} Hz")
    for name, runs in (("without scraping", plain), ("with scraping", scraped)):
        print(f"{name:17}: fps median {med(runs, 'fps'):.2f}, p99 end to end median "
              f"{med(runs, 'p99'):.3f} ms")
    print(f"ratio scraped/plain: fps {med(scraped, 'fps') / med(plain, 'fps'):.4f}, "
          f"p99 {med(scraped, 'p99') / med(plain, 'p99'):.4f}")


if __name__ == "__main__":
    main()
