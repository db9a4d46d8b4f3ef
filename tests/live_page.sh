#!/bin/sh
# The live web view in a real browser (CTest LivePage.Chromium): `jetagent run --serve` on the demo
# model against a fixture Orin Nano's sysfs tree (power rails and thermal zones, so all three
# charts have data), with a token, then tools/check_live_page.py opens the page in headless
# chromium while the run goes on: the page sets up, its charts draw and update, the video element
# receives frames, no console error; a screenshot (OUT_DIR/live.png).
#
#   live_page.sh JETAGENT PYTHON3 CHECK_SCRIPT SOURCE_DIR OUT_DIR
#
# Exit 0 when the page passes, 77 (CTest's skip) when Debian's libjs-chart.js or chromium is
# missing, 1 otherwise.
set -eu
jetagent=$1 python=$2 check=$3 source=$4 out=$5

if [ ! -f /usr/share/javascript/chart.js/chart.min.js ]; then
    echo "skipped: Debian's Chart.js is missing (apt install libjs-chart.js)"
    exit 77
fi
rm -rf "$out"
mkdir -p "$out"
"$jetagent" -q power --fixture orin-nano-jp6 --sysfs-root "$out/board" -d 0.2 >/dev/null
token=live-page-token
cat >"$out/c.yaml" <<YAML
source: {uri: "synthetic://shapes", width: 640, height: 480, fps: 15, seed: 5}
run: {duration_s: 90}
tasks:
  - name: shapes
    model: $source/models/shapes_cnn.onnx
    labels: $source/models/shapes_labels.txt
    preprocess: {resize: stretch, interpolation: area}
logging: {dir: $out/logs, status_interval_s: 0}
power: {sysfs_root: "$out/board"}
http: {listen: "127.0.0.1:0", token: $token}
YAML
"$jetagent" run -c "$out/c.yaml" >"$out/run.out" 2>"$out/run.err" &
agent=$!
stop() { kill "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
trap stop EXIT
url=
tries=0
while [ -z "$url" ] && [ $tries -lt 300 ]; do
    url=$(sed -n 's/.*live view on \(http:[^ ]*\).*/\1/p' "$out/run.out" "$out/run.err" | head -n 1)
    if ! kill -0 "$agent" 2>/dev/null; then
        echo "jetagent ended before serving:"; cat "$out/run.err"; exit 1
    fi
    [ -n "$url" ] || sleep 0.1
    tries=$((tries + 1))
done
if [ -z "$url" ]; then
    echo "no 'live view on' line from jetagent:"; cat "$out/run.err"; exit 1
fi
"$python" "$check" "${url}?token=$token" --screenshot "$out/live.png" --seconds 45
