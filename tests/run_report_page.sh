#!/bin/sh
# A real run's report in a real browser (CTest RunReportPage.Chromium): `jetagent run` on the demo
# model against a fixture Orin Nano's sysfs tree (power rails, so energy per frame), a power.csv
# written to the power sampler's format when the run left none, then `jetagent report`, and
# tools/check_html_page.py opens the page in headless chromium: every chart drawn, no script error,
# a screenshot (OUT_DIR/report.png).
#
#   run_report_page.sh JETAGENT PYTHON3 CHECK_SCRIPT SOURCE_DIR OUT_DIR [FRAMES]
#
# Exit 0 when the page passes, 77 (CTest's skip) when Debian's libjs-chart.js or chromium is
# missing, 1 otherwise.
set -eu
jetagent=$1 python=$2 check=$3 source=$4 out=$5 frames=${6:-300}
. "$(dirname "$0")/demo_run.sh"

need_chart_js
rm -rf "$out"
mkdir -p "$out"
"$jetagent" -q power --fixture orin-nano-jp6 --sysfs-root "$out/board" -d 0.2 >/dev/null
cat >"$out/c.yaml" <<EOF
source: {uri: "synthetic://shapes", width: 320, height: 240, fps: 30, seed: 5}
run: {frames: $frames, pacing: none}
$(demo_tasks_yaml "$source")
logging: {dir: $out/logs, status_interval_s: 0}
power: {sysfs_root: "$out/board"}
EOF
"$jetagent" -q run -c "$out/c.yaml" >/dev/null
run=$(ls -d "$out"/logs/*/ | head -n 1)
run=${run%/}
if [ ! -f "$run/power.csv" ]; then
    # Rows every 100 ms from the first capture to the last, rails and zones that drift, and a
    # clock left empty in every other row as an unavailable reading would be.
    "$python" - "$run" <<'EOF'
import csv, sys
run = sys.argv[1]
with open(run + '/shapes.frames.csv') as f:
    captures = [int(row['capture_ns']) for row in csv.DictReader(f)]
start, end = min(captures), max(captures)
with open(run + '/power.csv', 'w') as f:
    f.write('time_ns,t_s,VDD_IN_W,VDD_CPU_GPU_CV_W,VDD_SOC_W,total_W,cpu-thermal_C,'
            'gpu-thermal_C,gpu_MHz,gpu_load_pct,cpu_MHz,emc_MHz,fan_rpm\n')
    i = 0
    while start + i * 100_000_000 <= end + 100_000_000:
        w = 5 + (i % 7) * 0.25
        f.write('%d,%.1f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%s,%d,1510,2133,\n' % (
            start + i * 100_000_000, i * 0.1, w, w * 0.4, w * 0.3, w, 45 + i * 0.05,
            44 + i * 0.04, '' if i % 2 else '918', 30 + i % 50))
        i += 1
EOF
fi
"$jetagent" report "$run" -o "$out/report.html"
exec "$python" "$check" "$out/report.html" --screenshot "$out/report.png" --window-size 1280,6000
