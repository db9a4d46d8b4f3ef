#!/usr/bin/env python3
"""jetagent against the real Prometheus, promtool and node_exporter of Debian's packages.

CTest Prometheus.* (label slow): every exposition passes `promtool check metrics` (text 0.0.4 and
OpenMetrics; a one-stream run on a fixture Orin Nano's rails and a two-stream run), a real
`prometheus` scrapes a running `jetagent run` every second with the bearer token and its HTTP API
answers histogram_quantile(0.99, ...) within one bucket of the run's own p99 (summary.json) and
rate() of the processed counter close to the run's fps; and node_exporter's textfile collector
re-exports what `jetagent bench`, `run` and `sweep` wrote with --prom-textfile.

    prometheus_e2e.py JETAGENT SOURCE_DIR OUT_DIR {promtool|prometheus|textfile}

Everything listens on loopback at free ports, with data in OUT_DIR. A missing program is a
failure that names its package (tools/dev.sh installs them), never a skip.
"""

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

TOKEN = "prom-e2e-token"
PACKAGES = {
    "promtool": "prometheus",
    "prometheus": "prometheus",
    "prometheus-node-exporter": "prometheus-node-exporter",
}


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def need(program):
    path = shutil.which(program) or shutil.which(program, path="/usr/bin:/usr/sbin")
    if not path:
        fail(f"{program} is missing: apt install {PACKAGES[program]} (tools/dev.sh lists it)")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, headers=None, timeout=10):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()


def demo_tasks(source, deadline_ms=None):
    extra = f"\n    deadline_ms: {deadline_ms}" if deadline_ms else ""
    return (
        "tasks:\n"
        "  - name: shapes\n"
        f"    model: {source}/models/shapes_cnn.onnx\n"
        f"    labels: {source}/models/shapes_labels.txt\n"
        "    preprocess: {resize: stretch, interpolation: area}" + extra + "\n"
    )


def write_config(out, name, source, sources_yaml, run_yaml, serve=True, tasks=None):
    path = os.path.join(out, name + ".yaml")
    text = (
        sources_yaml
        + "\n"
        + run_yaml
        + "\n"
        + (tasks or demo_tasks(source))
        + f"logging: {{dir: {out}/logs-{name}, status_interval_s: 0}}\n"
        + f'power: {{sysfs_root: "{out}/board"}}\n'
    )
    if serve:
        text += f'http: {{listen: "127.0.0.1:0", token: {TOKEN}}}\n'
    with open(path, "w") as f:
        f.write(text)
    return path


class Agent:
    """`jetagent run` in the background, until its live view's address is logged."""

    def __init__(self, jetagent, config, out, name, extra=()):
        self.stdout = open(os.path.join(out, name + ".out"), "w+")
        self.stderr = open(os.path.join(out, name + ".err"), "w+")
        self.proc = subprocess.Popen(
            [jetagent, "run", "-c", config, *extra], stdout=self.stdout, stderr=self.stderr
        )
        self.url = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.url:
            for log in (self.stdout, self.stderr):
                log.flush()
                with open(log.name) as f:
                    m = re.search(r"live view on (http://\S+)", f.read())
                if m:
                    self.url = m.group(1)
            if self.proc.poll() is not None and not self.url:
                break
            time.sleep(0.1)
        if not self.url:
            self.stop()
            fail("jetagent did not serve:\n" + self.output())

    def output(self):
        text = ""
        for log in (self.stdout, self.stderr):
            log.flush()
            with open(log.name) as f:
                text += f.read()
        return text

    def metrics(self, openmetrics=False):
        headers = {"Authorization": "Bearer " + TOKEN}
        if openmetrics:
            headers["Accept"] = "application/openmetrics-text; version=1.0.0"
        status, ctype, body = http_get(self.url + "metrics", headers)
        if status != 200:
            fail(f"/metrics answered {status}")
        return ctype, body

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            fail(f"jetagent ran past {timeout} s:\n" + self.output())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def promtool_check(promtool, text, what):
    result = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True
    )
    if result.returncode != 0:
        fail(f"promtool check metrics on {what}:\n{result.stdout}{result.stderr}\n--- input:\n{text}")
    print(f"promtool: {what}: ok ({len(text.splitlines())} lines)")


SUFFIXES = {"counter": ("_total", "_created"), "gauge": ("",), "info": ("_info",),
            "histogram": ("_bucket", "_sum", "_count", "_created")}


def check_openmetrics(text, what):
    """OpenMetrics 1.0's structure, which promtool 2.42 (Debian 12) cannot lint: it parses the
    text format 0.0.4 alone, to which an OpenMetrics counter's family (named without _total) and
    the info type are foreign. Prometheus' own OpenMetrics parser reads the same text in the
    `prometheus` test (the scrape negotiates it)."""
    lines = text.split("\n")
    if lines[-2:] != ["# EOF", ""]:
        fail(f"{what}: does not end with '# EOF' and a line feed")
    families, current, seen = {}, None, set()
    for n, line in enumerate(lines[:-2], 1):
        m = re.match(r"# (TYPE|UNIT|HELP) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$", line)
        if m:
            kind, name, rest = m.groups()
            if name != current:  # a family's descriptors, in any order, begin it
                if name in seen:
                    fail(f"{what}:{n}: family {name} appears twice")
                seen.add(name)
                current = name
            if kind == "TYPE":
                if rest not in SUFFIXES:
                    fail(f"{what}:{n}: type {rest}")
                if rest == "counter" and name.endswith("_total"):
                    fail(f"{what}:{n}: a counter family is named without _total")
                families[name] = rest
            elif kind == "UNIT" and not name.endswith("_" + rest):
                fail(f"{what}:{n}: unit {rest} is not the end of {name}")
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if not m:
            fail(f"{what}:{n}: not a sample: {line!r}")
        name, labels, value = m.groups()
        if current not in families or not any(
                name == current + s for s in SUFFIXES[families[current]]):
            fail(f"{what}:{n}: {name} is not a sample of family {current}")
        if name.endswith("_bucket") and 'le="' not in (labels or ""):
            fail(f"{what}:{n}: a bucket without le")
        float(value)
    print(f"OpenMetrics structure: {what}: ok ({len(families)} families)")


def wait_for(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    fail(f"timed out waiting for {what}")


def only_run_summary(out, name):
    logs = os.path.join(out, "logs-" + name)
    runs = sorted(os.listdir(logs))
    with open(os.path.join(logs, runs[-1], "summary.json")) as f:
        return json.load(f)


def fixture_board(jetagent, out):
    subprocess.run(
        [jetagent, "-q", "power", "--fixture", "orin-nano-jp6", "--sysfs-root", out + "/board",
         "-d", "0.2"], check=True, stdout=subprocess.DEVNULL)


ONE_STREAM = 'source: {uri: "synthetic://shapes", width: 320, height: 240, fps: 15, seed: 5}'
TWO_STREAMS = (
    "sources:\n"
    '  - {name: front, uri: "synthetic://shapes", width: 320, height: 240, fps: 15, seed: 5}\n'
    '  - {name: rear, uri: "synthetic://shapes", width: 320, height: 240, fps: 15, seed: 6}'
)


def check_promtool(jetagent, source, out):
    promtool = need("promtool")
    for name, sources in (("one", ONE_STREAM), ("two", TWO_STREAMS)):
        config = write_config(out, name, source, sources, "run: {duration_s: 60}",
                              tasks=demo_tasks(source, deadline_ms=40))
        agent = Agent(jetagent, config, out, name)
        try:
            # A few results first, so every family has samples.
            wait_for("results", lambda: "jetagent_frames_processed_total{" in agent.metrics()[1]
                     and re.search(r'jetagent_frames_processed_total\{[^}]*\} [1-9]',
                                   agent.metrics()[1]), 30)
            time.sleep(2)
            for openmetrics in (False, True):
                ctype, body = agent.metrics(openmetrics)
                fmt = "OpenMetrics" if openmetrics else "text 0.0.4"
                want = "application/openmetrics-text" if openmetrics else "text/plain; version=0.0.4"
                if not ctype.startswith(want):
                    fail(f"{fmt}: Content-Type {ctype}")
                if openmetrics != body.endswith("# EOF\n"):
                    fail(f"{fmt}: # EOF where it should not be, or missing")
                for family in ("jetagent_frame_latency_seconds", "jetagent_power_watts",
                               "jetagent_energy_joules", "jetagent_temperature_celsius",
                               "jetagent_board", "jetagent_build", "jetagent_deadline_seconds"):
                    if f" {family}" not in body:
                        fail(f"{fmt}, {name} stream(s): no {family} family:\n{body}")
                if name == "two" and 'stream="rear"' not in body:
                    fail("two streams: no stream=\"rear\" series:\n" + body)
                if openmetrics:
                    check_openmetrics(body, f"{name}-stream run")
                else:
                    promtool_check(promtool, body, f"{name}-stream run, {fmt}")
        finally:
            agent.stop()


def query(prom, expr, at=None):
    params = {"query": expr}
    if at is not None:
        params["time"] = f"{at:.3f}"
    _, _, body = http_get(prom + "/api/v1/query?" + urllib.parse.urlencode(params))
    answer = json.loads(body)
    if answer.get("status") != "success":
        fail(f"query {expr}: {answer}")
    return answer["data"]["result"]


def bucket_index(bounds, value):
    for i, bound in enumerate(bounds):
        if value <= bound:
            return i
    return len(bounds)


def check_prometheus(jetagent, source, out):
    prometheus = need("prometheus")
    config = write_config(out, "scraped", source, ONE_STREAM, "run: {duration_s: 45}",
                          tasks=demo_tasks(source, deadline_ms=40))
    agent = Agent(jetagent, config, out, "scraped")
    port = urllib.parse.urlparse(agent.url).port
    prom_port = free_port()
    with open(os.path.join(out, "prometheus.yml"), "w") as f:
        f.write(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: jetagent\n"
            "    scrape_interval: 1s\n"
            "    scrape_timeout: 900ms\n"
            f"    authorization: {{type: Bearer, credentials: {TOKEN}}}\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
        )
    log = open(os.path.join(out, "prometheus.log"), "w")
    prom = subprocess.Popen(
        [prometheus, "--config.file=" + os.path.join(out, "prometheus.yml"),
         "--storage.tsdb.path=" + os.path.join(out, "tsdb"),
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        def healthy():
            try:
                return query(base, 'up{job="jetagent"} == 1')
            except OSError:
                return None
        wait_for("Prometheus to scrape jetagent (up == 1)", healthy, 40)
        # Prometheus asks for OpenMetrics first: its parser of that format read the families
        # (metadata by family name, counters without _total, the info type).
        def metadata():
            _, _, body = http_get(base + "/api/v1/metadata")
            return json.loads(body)["data"]
        meta = wait_for("metadata", lambda: (lambda m: m if "jetagent_frames_processed" in m
                                             else None)(metadata()), 20)
        for family, kind in (("jetagent_frames_processed", "counter"), ("jetagent_build", "info"),
                             ("jetagent_frame_latency_seconds", "histogram")):
            if meta.get(family, [{}])[0].get("type") != kind:
                fail(f"Prometheus' metadata of {family}: {meta.get(family)}, not {kind}")
        print("Prometheus read the OpenMetrics families:", ", ".join(sorted(
            f for f in meta if f.startswith("jetagent_"))))
        # rate() while the run goes on, once the window holds steady-state scrapes.
        rates = []
        while agent.proc.poll() is None:
            time.sleep(1)
            result = query(base, 'rate(jetagent_frames_processed_total{task="shapes"}[10s])')
            if result:
                rates.append(float(result[0]["value"][1]))
        agent.wait(60)
        summary = only_run_summary(out, "scraped")
        task = summary["tasks"][0]
        fps = task["throughput_fps"]
        p99_s = task["latency_ms"]["end_to_end"]["p99"] / 1e3
        # The buckets of the last scrape (range selectors skip the staleness markers).
        expr = ('histogram_quantile(0.99, last_over_time(jetagent_frame_latency_seconds_bucket'
                '{task="shapes",stage="end_to_end"}[5m]))')
        result = query(base, expr)
        if not result:
            fail("no answer to " + expr)
        prom_p99 = float(result[0]["value"][1])
        bounds = sorted(float(s["metric"]["le"]) for s in query(
            base, 'last_over_time(jetagent_frame_latency_seconds_bucket'
                  '{task="shapes",stage="end_to_end"}[5m])') if s["metric"]["le"] != "+Inf")
        if not any(abs(b - 0.04) < 1e-12 for b in bounds):
            fail(f"the 40 ms deadline is not a bucket bound: {bounds}")
        a, b = bucket_index(bounds, prom_p99), bucket_index(bounds, p99_s)
        print(f"p99: Prometheus {prom_p99 * 1e3:.3f} ms (bucket {a}), summary {p99_s * 1e3:.3f} ms "
              f"(bucket {b}); {len(bounds)} bounds")
        if abs(a - b) > 1:
            fail("histogram_quantile(0.99) is more than one bucket from the summary's p99")
        steady = sorted(rates[len(rates) // 3:]) or [0.0]
        median = steady[len(steady) // 2]
        print(f"fps: rate() median {median:.2f} over {len(steady)} queries, summary {fps:.2f}")
        if not math.isclose(median, fps, rel_tol=0.15):
            fail(f"rate(jetagent_frames_processed_total) {median:.2f}/s is not the run's {fps:.2f}")
    finally:
        agent.stop()
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()


def check_textfile(jetagent, source, out):
    exporter = need("prometheus-node-exporter")
    promtool = need("promtool")
    textdir = os.path.join(out, "textfiles")
    os.makedirs(textdir)
    # A directory that does not exist is refused before any work.
    missing = subprocess.run([jetagent, "run", "-c", "/nonexistent.yaml", "--prom-textfile",
                              os.path.join(out, "none")], capture_output=True, text=True)
    if missing.returncode == 0 or "--prom-textfile" not in missing.stderr:
        fail("a missing --prom-textfile directory was not named:\n" + missing.stderr)
    bench_config = write_config(out, "bench", source, ONE_STREAM, "run: {}", serve=False)
    subprocess.run([jetagent, "-q", "bench", "-c", bench_config, "--rounds", "2", "--iterations",
                    "10", "--warmup", "2", "--prom-textfile", textdir], check=True,
                   stdout=subprocess.DEVNULL)
    run_config = write_config(out, "finite", source, ONE_STREAM,
                              "run: {frames: 60, pacing: none}", serve=False)
    subprocess.run([jetagent, "-q", "run", "-c", run_config, "--prom-textfile", textdir],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([jetagent, "-q", "sweep", "--models", source + "/models/shapes_cnn.onnx",
                    "--engines", "xnnpack", "--iterations", "20", "-o", out + "/sweep",
                    "--prom-textfile", textdir], check=True, stdout=subprocess.DEVNULL)
    names = sorted(os.listdir(textdir))
    print("textfiles:", names)
    if names != ["jetagent_bench_shapes.prom", "jetagent_run_finite.prom",
                 "jetagent_sweep_sweep.prom"]:
        fail(f"expected the bench's and the run's .prom files alone (no temporary): {names}")
    for name in names:
        with open(os.path.join(textdir, name)) as f:
            promtool_check(promtool, f.read(), name)
    port = free_port()
    log = open(os.path.join(out, "node_exporter.log"), "w")
    node = subprocess.Popen(
        [exporter, "--collector.disable-defaults", "--collector.textfile",
         "--collector.textfile.directory=" + textdir, f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        def scraped():
            try:
                return http_get(f"http://127.0.0.1:{port}/metrics")[2]
            except OSError:
                return None
        body = wait_for("node_exporter", scraped, 20)
        # node_exporter sorts the labels, le last; each file's series carry its `work`.
        for line in ('jetagent_frame_latency_seconds_bucket{stage="end_to_end",stream="bench",'
                     'task="shapes",work="bench_shapes",le="+Inf"} ',
                     'jetagent_frame_latency_seconds_count{stage="inference",stream="sweep",'
                     'task="shapes_cnn/xnnpack/b1",work="sweep_sweep"} 20',
                     'jetagent_frames_processed_total{stream="main",task="shapes",work="run_finite"} 60',
                     'jetagent_last_run_timestamp_seconds{work="run_finite"} ',
                     'jetagent_last_run_timestamp_seconds{work="bench_shapes"} ',
                     'jetagent_build_info{engines='):
            if line not in body:
                fail(f"node_exporter does not re-export {line!r}:\n{body}")
        if re.search(r"^node_textfile_scrape_error 1$", body, re.MULTILINE):
            fail("node_exporter reports a textfile scrape error:\n" + body)
        with open(os.path.join(out, "node_exporter.log")) as f:
            errors = [line for line in f if "level=error" in line]
        if errors:
            fail("node_exporter could not gather the textfiles:\n" + "".join(errors))
        print("node_exporter re-exports the three textfiles")
    finally:
        node.terminate()
        node.wait(timeout=20)


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    jetagent, source, out, mode = sys.argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    fixture_board(jetagent, out)
    {"promtool": check_promtool, "prometheus": check_prometheus,
     "textfile": check_textfile}[mode](jetagent, source, out)
    print("ok")


if __name__ == "__main__":
    main()
