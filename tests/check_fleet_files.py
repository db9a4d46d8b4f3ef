#!/usr/bin/python3
"""Checks the shipped fleet files (fleet/: prometheus.yml, jetagent.rules.yml, grafana-dashboard.json).

    tests/check_fleet_files.py names ROOT
        the dashboard is a Grafana dashboard model (valid JSON, panels with positions and
        targets, the datasource, instance, task and stream variables) and every jetagent_ name in
        its queries and in the rules file is a metric of the contract (docs/fleet.md) or a
        recording rule of the rules file
    tests/check_fleet_files.py config ROOT PROMTOOL
        `promtool check config` on prometheus.yml, its token file replaced by a temporary one
    tests/check_fleet_files.py rules ROOT PROMTOOL
        `promtool check rules` on the rules file
    tests/check_fleet_files.py test-rules ROOT PROMTOOL
        `promtool test rules` on fleet/tests/rules_test.yml (the rules' logic)
    tests/check_fleet_files.py queries ROOT PROMETHEUS JETAGENT WORK_DIR
        a real Prometheus on loopback, configured from prometheus.yml (its token file too),
        scrapes a real `jetagent run` (two streams of one task on a fixture Orin Nano's sysfs
        tree: rails, zones, clocks) serving /metrics behind that token; then every dashboard
        query and variable must evaluate
        through /api/v1/query (a syntax error is a 400) to at least one finite value, and every
        rule must be loaded and evaluate without error

A missing program is a failure naming the Debian package (tools/dev.sh installs them). Standard
library only. Exits 0 when every check passes, 1 otherwise, printing what failed.
"""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

# The metric names the daemon exposes (the contract shared with the /metrics endpoint and the
# textfiles; docs/fleet.md). The histogram's series carry the suffixes below.
CONTRACT = {
    "jetagent_frame_latency_seconds": "histogram",
    "jetagent_frames_processed_total": "counter",
    "jetagent_frames_dropped_total": "counter",
    "jetagent_frames_failed_total": "counter",
    "jetagent_deadline_misses_total": "counter",
    "jetagent_source_reconnects_total": "counter",
    "jetagent_energy_joules_total": "counter",
    "jetagent_queue_depth": "gauge",
    "jetagent_frames_per_second": "gauge",
    "jetagent_deadline_seconds": "gauge",
    "jetagent_power_watts": "gauge",
    "jetagent_temperature_celsius": "gauge",
    "jetagent_clock_hertz": "gauge",
    "jetagent_throttled": "gauge",
    "jetagent_running": "gauge",
    "jetagent_start_time_seconds": "gauge",
    "jetagent_build_info": "gauge",
    "jetagent_board_info": "gauge",
    "jetagent_model_info": "gauge",
    "jetagent_last_run_timestamp_seconds": "gauge",
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# What the dashboard must show (the list): each of these names in some panel's query.
DASHBOARD_MUST_READ = [
    "jetagent_frame_latency_seconds_bucket", "jetagent_frames_per_second",
    "jetagent_frames_dropped_total", "jetagent_deadline_misses_total",
    "jetagent_energy_joules_total", "jetagent_power_watts", "jetagent_temperature_celsius",
    "jetagent_clock_hertz", "jetagent_throttled", "jetagent_build_info", "jetagent_board_info",
    "jetagent_model_info",
]
VARIABLES = ["datasource", "instance", "task", "stream"]

IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
RECORD = re.compile(r"^\s*-?\s*record:\s*(\S+)\s*$", re.M)
LABEL_VALUES = re.compile(r"^label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)$", re.S)


class CheckFailed(Exception):
    pass


def fleet_path(root, name):
    return os.path.join(root, "fleet", name)


def recording_rules(root):
    with open(fleet_path(root, "jetagent.rules.yml"), encoding="utf-8") as rules:
        return set(RECORD.findall(rules.read()))


def unknown_names(text, recorded):
    """The jetagent_ identifiers of a query or file that are neither the contract's nor recorded."""
    bad = []
    for name in IDENTIFIER.findall(QUOTED.sub('""', text)):
        if "jetagent_" not in name or name in recorded or name in CONTRACT:
            continue
        base = next((name[:-len(s)] for s in HISTOGRAM_SUFFIXES if name.endswith(s)), None)
        if base is not None and CONTRACT.get(base) == "histogram":
            continue
        bad.append(name)
    return bad


def load_dashboard(root):
    path = fleet_path(root, "grafana-dashboard.json")
    try:
        with open(path, encoding="utf-8") as page:
            return json.load(page)
    except (OSError, ValueError) as error:
        raise CheckFailed("%s is not a readable JSON file: %s" % (path, error))


def dashboard_queries(dashboard):
    """(where, PromQL text) of every panel target and every query variable."""
    queries = []
    for panel in dashboard.get("panels", []):
        for inner in [panel] + panel.get("panels", []):
            for target in inner.get("targets", []):
                queries.append(("panel '%s' target %s" % (inner.get("title"), target.get("refId")),
                                target.get("expr", "")))
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable.get("query")
            text = query.get("query", "") if isinstance(query, dict) else query or ""
            queries.append(("variable $%s" % variable.get("name"), text))
    return queries


def check_names(root):
    problems = []
    dashboard = load_dashboard(root)
    recorded = recording_rules(root)
    for key in ("title", "uid", "panels", "templating", "schemaVersion"):
        if key not in dashboard:
            problems.append("the dashboard has no '%s'" % key)
    ids = set()
    for panel in dashboard.get("panels", []):
        title = panel.get("title", "?")
        if panel.get("id") in ids:
            problems.append("panel '%s': id %s is used twice" % (title, panel.get("id")))
        ids.add(panel.get("id"))
        position = panel.get("gridPos", {})
        if not all(isinstance(position.get(k), int) for k in ("x", "y", "w", "h")):
            problems.append("panel '%s' has no gridPos x, y, w, h" % title)
        if panel.get("type") == "row":
            continue
        if not panel.get("targets"):
            problems.append("panel '%s' has no query" % title)
        for target in panel.get("targets", []):
            source = target.get("datasource", panel.get("datasource", {}))
            if source.get("uid") != "${datasource}":
                problems.append("panel '%s' target %s does not use the $datasource variable"
                                % (title, target.get("refId")))
            if not target.get("expr", "").strip():
                problems.append("panel '%s' target %s has an empty expr" % (title, target.get("refId")))
    names = [v.get("name") for v in dashboard.get("templating", {}).get("list", [])]
    for wanted in VARIABLES:
        if wanted not in names:
            problems.append("the dashboard has no variable $%s" % wanted)
    queries = dashboard_queries(dashboard)
    for where, text in queries:
        for name in unknown_names(text, recorded):
            problems.append("%s reads '%s', which is not a metric of the contract" % (where, name))
    every_query = "\n".join(text for _, text in queries)
    for name in DASHBOARD_MUST_READ:
        if not re.search(r"\b%s\b" % name, every_query):
            problems.append("no panel reads %s" % name)
    if "histogram_quantile(" not in every_query:
        problems.append("no panel computes latency quantiles with histogram_quantile")
    with open(fleet_path(root, "jetagent.rules.yml"), encoding="utf-8") as rules:
        for name in unknown_names(rules.read(), recorded):
            problems.append("jetagent.rules.yml reads '%s', which is not a metric of the contract"
                            % name)
    if not recorded:
        problems.append("jetagent.rules.yml records nothing")
    if problems:
        raise CheckFailed("\n".join(problems))
    print("%d dashboard queries and the rules file (%d recording rules) read only the contract's "
          "metrics" % (len(queries), len(recorded)))


def run_tool(command, cwd=None):
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, check=False)
    print(result.stdout, end="")
    if result.returncode != 0:
        raise CheckFailed("%s exited %d" % (os.path.basename(command[0]), result.returncode))


def require_program(path, package):
    if not path or not os.access(path, os.X_OK):
        raise CheckFailed("'%s' is missing: install the Debian package %s (tools/dev.sh deps "
                          "installs it)" % (path, package))


def shipped_config_for(root, work, token_file, replace_targets=None, interval=None):
    """prometheus.yml with its token file (and optionally its targets and intervals) replaced,
    written into WORK beside a copy of the rules file it names."""
    with open(fleet_path(root, "prometheus.yml"), encoding="utf-8") as config:
        text = config.read()
    if "/etc/prometheus/jetagent.token" not in text:
        raise CheckFailed("prometheus.yml names no /etc/prometheus/jetagent.token credentials file")
    text = text.replace("/etc/prometheus/jetagent.token", token_file)
    if replace_targets is not None:
        lines = [l for l in text.split("\n") if not re.match(r"^\s*- jetson-\d+\.example:\d+$", l)]
        text = re.sub(r"(?m)^(\s*)- targets:\s*$", r"\g<0>\n\1    - " + replace_targets,
                      "\n".join(lines))
    if interval is not None:
        text = re.sub(r"(scrape_interval|evaluation_interval): 15s", r"\1: %s" % interval, text)
        text = text.replace("scrape_timeout: 5s", "scrape_timeout: %s" % interval)
    shutil.copy(fleet_path(root, "jetagent.rules.yml"), os.path.join(work, "jetagent.rules.yml"))
    path = os.path.join(work, "prometheus.yml")
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def write_token(work):
    token = os.path.join(work, "jetagent.token")
    with open(token, "w", encoding="utf-8") as out:
        out.write("a-test-token-not-a-secret")
    os.chmod(token, 0o600)
    return token


def check_config(root, promtool):
    require_program(promtool, "prometheus")
    with tempfile.TemporaryDirectory(prefix="jetagent-fleet-") as work:
        run_tool([promtool, "check", "config", shipped_config_for(root, work, write_token(work))])


# The unit the queries check scrapes: a real `jetagent run` of two synthetic streams through one
# task, on the recreated sysfs tree of an Orin Nano (rails, thermal zones, clocks, throttle
# counters), serving /metrics on loopback behind the token the shipped config sends.
UNIT_CONFIG = """sources:
  - {name: front, uri: "synthetic://shapes", width: 320, height: 240, fps: 15, seed: 5}
  - {name: rear, uri: "synthetic://shapes", width: 320, height: 240, fps: 15, seed: 6}
run: {duration_s: 120}
tasks:
  - name: shapes
    type: classification
    model: %(root)s/models/shapes_cnn.onnx
    labels: %(root)s/models/shapes_labels.txt
    engine: {batch: 2}
power: {sysfs_root: "%(work)s/board"}
http: {listen: "127.0.0.1:%(port)d", token: "%(token)s", metrics_only: true}
logging: {dir: "%(work)s/logs", status_interval_s: 0}
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_json(url, timeout=5):
    """(status, decoded JSON or None) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        body = error.read().decode("utf-8", "replace")
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, {"error": body}


def wait_for(what, predicate, seconds, processes):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for name, process in processes:
            if process.poll() is not None:
                raise CheckFailed("%s exited (%d) while waiting for %s" % (name, process.returncode, what))
        try:
            if predicate():
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.25)
    raise CheckFailed("timed out after %d s waiting for %s" % (seconds, what))


def substitute_variables(query):
    """A dashboard query as Grafana sends it with every variable set to All."""
    text = query.replace("$__rate_interval", "10s").replace("$__interval", "2s")
    return re.sub(r"\$\{?(instance|task|stream)\}?", ".*", text)


def finite_values(result):
    values = []
    for series in result.get("data", {}).get("result", []):
        value = series.get("value", [None, "NaN"])[1]
        values.append(float(value))
    return [v for v in values if math.isfinite(v)]


def check_queries(root, prometheus, jetagent, work_root):
    require_program(prometheus, "prometheus")
    require_program(jetagent, "jetagent (build it)")
    os.makedirs(work_root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="queries-", dir=work_root)
    run_tool([jetagent, "-q", "power", "--fixture", "orin-nano-jp6", "--sysfs-root",
              os.path.join(work, "board"), "-d", "0.2"])
    token_file = write_token(work)
    with open(token_file, encoding="utf-8") as f:
        token = f.read().strip()
    unit_port = free_port()
    prometheus_port = free_port()
    unit_config = os.path.join(work, "unit.yaml")
    with open(unit_config, "w", encoding="utf-8") as out:
        out.write(UNIT_CONFIG % {"root": os.path.abspath(root), "work": work, "port": unit_port,
                                 "token": token})
    config = shipped_config_for(root, work, token_file,
                                replace_targets="127.0.0.1:%d" % unit_port, interval="1s")
    processes = []
    logs = []
    try:
        unit_log = open(os.path.join(work, "jetagent.log"), "w")
        logs.append(unit_log)
        processes.append(("jetagent", subprocess.Popen(
            [jetagent, "run", "-c", unit_config], stdout=unit_log, stderr=subprocess.STDOUT)))
        prometheus_log = open(os.path.join(work, "prometheus.log"), "w")
        logs.append(prometheus_log)
        processes.append(("prometheus", subprocess.Popen(
            [prometheus, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % prometheus_port],
            stdout=prometheus_log, stderr=subprocess.STDOUT)))
        api = "http://127.0.0.1:%d/api/v1/" % prometheus_port

        def query(expr):
            return http_json(api + "query?" + urllib.parse.urlencode({"query": expr}))

        def ready():
            url = "http://127.0.0.1:%d/-/ready" % prometheus_port
            with urllib.request.urlopen(url, timeout=2) as reply:
                return reply.status == 200

        wait_for("prometheus to be ready", ready, 60, processes)
        # A 10 s rate window wants a few scrapes of growing counters.
        wait_for("12 scrapes of the unit",
                 lambda: finite_values(query('count_over_time(up{job="jetagent"}[1m]) >= 12')[1]), 90,
                 processes)
        _, up = query('up{job="jetagent"}')
        if finite_values(up) != [1.0]:
            raise CheckFailed("the scrape of jetagent failed: %s (see %s)" % (up, work))

        problems = []
        checked = 0
        for where, text in dashboard_queries(load_dashboard(root)):
            variable = LABEL_VALUES.match(text.strip())
            expr = substitute_variables(variable.group(1) if variable else text)
            status, answer = query(expr)
            checked += 1
            if status != 200 or answer.get("status") != "success":
                problems.append("%s: Prometheus answered %d: %s\n    %s"
                                % (where, status, answer.get("error"), expr))
                continue
            if variable:
                label = variable.group(2)
                found = [s["metric"].get(label) for s in answer["data"]["result"]]
                if not any(found):
                    problems.append("%s: no series has the label %s\n    %s" % (where, label, expr))
            elif not finite_values(answer):
                problems.append("%s: no finite value from the unit\n    %s" % (where, expr))
        # The rules: every one loaded and evaluated without error, each recording rule a value.
        wait_for("the rules' evaluation",
                 lambda: all(not r.get("lastEvaluation", "0001").startswith("0001")
                             for g in http_json(api + "rules")[1]["data"]["groups"] for r in g["rules"]),
                 30, processes)
        _, rules = http_json(api + "rules")
        groups = rules["data"]["groups"]
        loaded = [r for g in groups for r in g["rules"]]
        for rule in loaded:
            if rule.get("health") != "ok":
                problems.append("rule %s: health %s, %s" % (rule["name"], rule.get("health"),
                                                            rule.get("lastError")))
            if rule.get("type") == "recording":
                checked += 1
                _, answer = query(rule["name"])
                if not finite_values(answer):
                    problems.append("recording rule %s has no finite value" % rule["name"])
        with open(fleet_path(root, "jetagent.rules.yml"), encoding="utf-8") as shipped:
            expected = len(re.findall(r"^\s*- (?:record|alert):", shipped.read(), re.M))
        if len(loaded) != expected:
            problems.append("Prometheus loaded %d rules of the %d in jetagent.rules.yml"
                            % (len(loaded), expected))
        if problems:
            raise CheckFailed("\n".join(problems) + "\n(Prometheus's files: %s)" % work)
        print("%d dashboard queries and recording rules evaluated on Prometheus %s, each with a "
              "finite value; %d rules loaded, all healthy"
              % (checked, prometheus_version(prometheus), len(loaded)))
    finally:
        for _, process in processes:
            process.terminate()
        for _, process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in logs:
            log.close()
    shutil.rmtree(work, ignore_errors=True)


def prometheus_version(prometheus):
    result = subprocess.run([prometheus, "--version"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, check=False)
    first = result.stdout.split("\n")[0]
    match = re.search(r"version (\S+)", first)
    return match.group(1) if match else "(unknown version)"


def main(argv):
    usage = ("usage: check_fleet_files.py names ROOT | config ROOT PROMTOOL | rules ROOT PROMTOOL | "
             "test-rules ROOT PROMTOOL | queries ROOT PROMETHEUS JETAGENT WORK_DIR")
    commands = {"names": 1, "config": 2, "rules": 2, "test-rules": 2, "queries": 4}
    if len(argv) < 2 or argv[1] not in commands or len(argv) != 2 + commands[argv[1]]:
        print(usage, file=sys.stderr)
        return 2
    command, root = argv[1], argv[2]
    try:
        if command == "names":
            check_names(root)
        elif command == "config":
            check_config(root, argv[3])
        elif command == "rules":
            require_program(argv[3], "prometheus")
            run_tool([argv[3], "check", "rules", fleet_path(root, "jetagent.rules.yml")])
        elif command == "test-rules":
            require_program(argv[3], "prometheus")
            run_tool([argv[3], "test", "rules", "rules_test.yml"], cwd=fleet_path(root, "tests"))
        else:
            check_queries(root, argv[3], argv[4], argv[5])
    except CheckFailed as failure:
        print("FAILED: %s" % failure)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
