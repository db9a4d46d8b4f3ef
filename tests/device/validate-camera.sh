#!/usr/bin/env bash
# Validates jetagent's camera sources on a real board, where no test here can reach: run it on the
# Jetson itself with the jetagent binary you built (it builds nothing). Needs python3 (reads JSON).
#
#   tests/device/validate-camera.sh path/to/jetagent [--seconds N] [--sensor-id N] [--usb /dev/videoN]
#
# 1. `jetagent probe cameras` (text and --json) must succeed; it shows which nodes are USB cameras
#    and which are CSI sensors of the Jetson's capture driver (tegra-video / vi-output).
# 2. CSI: when nvarguscamerasrc exists (gst-inspect-1.0) and a CSI sensor is present, a run of
#    N seconds (default 10) on csi://ID (default 0) at 1280x720 and 30 fps.
# 3. USB: when a USB camera exists (or --usb names one), a run on v4l2://NODE, at 640x480 and
#    30 fps when the camera lists that, otherwise its first listed size at its highest rate up to 30.
# Each run is checked from its summary.json: frames arrived, the delivered rate is within 10% of
# the requested one, and the camera dropped at most 1% of its frames, with no stall or disconnect.
# Prints a PASS/FAIL/SKIP table and exits 1 if any check failed (2 on a usage error).
set -uo pipefail

usage() { sed -n '2,15p' "$0"; }
jetagent=""
seconds=10
sensor=0
usb=""
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds="${2:?--seconds needs a value}"; shift 2 ;;
    --sensor-id) sensor="${2:?--sensor-id needs a value}"; shift 2 ;;
    --usb) usb="${2:?--usb needs a device node}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    *)
        [ -z "$jetagent" ] || { echo "one jetagent binary only (see --help)" >&2; exit 2; }
        jetagent="$1"; shift ;;
    esac
done
[ -n "$jetagent" ] || { usage >&2; exit 2; }
[ -x "$jetagent" ] || { echo "not an executable: $jetagent" >&2; exit 2; }
case "$seconds" in ''|*[!0-9]*|0) echo "--seconds must be a positive whole number" >&2; exit 2 ;; esac
case "$sensor" in ''|*[!0-9]*) echo "--sensor-id must be a number (0..7)" >&2; exit 2 ;; esac
command -v python3 >/dev/null || { echo "python3 is needed to read jetagent's JSON" >&2; exit 2; }

root=$(cd "$(dirname "$0")/../.." && pwd)
demo="$root/firmware-config/demo.yaml"
if [ ! -f "$demo" ] || [ ! -f "$root/models/shapes_cnn.onnx" ]; then
    echo "this script belongs in a jetagent checkout: $demo or its model is missing" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The check table (record, finish) and json_value.
# shellcheck source=tests/device/checks.sh
. "$(dirname "$0")/checks.sh"


# The demo config with its source replaced (model paths made absolute, as the copy lives elsewhere).
make_config() { # FILE WIDTH HEIGHT FPS
    awk '/^source:/ { skip = 1; next } skip && /^[^ #]/ { skip = 0 } !skip' "$demo" |
        sed -e "s#\.\./models/#$root/models/#" > "$1"
    printf '\nsource:\n  uri: synthetic://shapes\n  width: %s\n  height: %s\n  fps: %s\n' \
        "$2" "$3" "$4" >> "$1"
}

# Runs jetagent on URI at WIDTHxHEIGHT and FPS for the set seconds and checks its summary.json.
check_run() { # NAME URI WIDTH HEIGHT FPS
    local name="$1" uri="$2" fps="$5" dir="$work/$1"
    mkdir -p "$dir"
    make_config "$dir/config.yaml" "$3" "$4" "$fps"
    echo "== $name: $uri at $3x$4, $fps fps, $seconds s"
    "$jetagent" run -c "$dir/config.yaml" -s "$uri" -n 0 -d "$seconds" -o "$dir/logs" \
        > "$dir/run.txt" 2>&1
    local status=$?
    local summary
    summary=$(find "$dir/logs" -name summary.json 2>/dev/null | head -n 1)
    if [ -z "$summary" ]; then
        record FAIL "$name run" "exit $status, no summary.json; the run's last lines:"
        tail -n 8 "$dir/run.txt" | sed 's/^/      /'
        return
    fi
    local failure
    failure=$(json_value "$summary" 'j["run"]["failure"]')
    if [ "$status" -ne 0 ] || [ -n "$failure" ]; then
        record FAIL "$name run" "exit $status: ${failure:-see below}"
        tail -n 8 "$dir/run.txt" | sed 's/^/      /'
    else
        record PASS "$name run" "$(json_value "$summary" 'j["source"]["detail"]')"
    fi

    local delivered delivered_fps dropped stalls disconnects
    delivered=$(json_value "$summary" 'j["source"]["stats"]["delivered"]')
    delivered_fps=$(json_value "$summary" 'j["source"]["stats"]["delivered_fps"]')
    dropped=$(json_value "$summary" 'j["source"]["stats"]["dropped_by_device"]')
    stalls=$(json_value "$summary" 'j["source"]["stats"]["stalls"]')
    disconnects=$(json_value "$summary" 'j["source"]["stats"]["disconnects"]')
    case "$delivered" in ''|*[!0-9]*|0)
        record FAIL "$name frames arrived" "none (source.stats.delivered: '${delivered}')"
        return ;;
    esac
    record PASS "$name frames arrived" "$delivered frames, $(json_value "$summary" \
        'str(j["source"]["width"]) + "x" + str(j["source"]["height"])')"

    if awk -v got="$delivered_fps" -v want="$fps" 'BEGIN { exit !(got >= 0.9 * want && got <= 1.1 * want) }'; then
        record PASS "$name rate" "$delivered_fps fps delivered, $fps requested"
    else
        record FAIL "$name rate" "$delivered_fps fps delivered, $fps requested (more than 10% apart)"
        echo "      In dim light cameras lengthen the exposure and lower their rate: light the scene,"
        echo "      or for USB set exposure_dynamic_framerate (older kernels: exposure_auto_priority)"
        echo "      to 0 in source.camera.controls."
    fi

    if awk -v d="$dropped" -v n="$delivered" 'BEGIN { exit !(d <= 0.01 * (n + d)) }' &&
        [ "$stalls" = 0 ] && [ "$disconnects" = 0 ]; then
        record PASS "$name drops" "$dropped dropped, $stalls stalls, $disconnects disconnects"
    else
        record FAIL "$name drops" "$dropped dropped (limit 1%), $stalls stalls, $disconnects disconnects"
    fi
}

echo "== 1. jetagent probe cameras"
"$jetagent" probe cameras | tee "$work/probe.txt"
probe_text=${PIPESTATUS[0]}
"$jetagent" probe cameras --json > "$work/probe.json" 2> "$work/probe.err"
probe_json=$?
if [ "$probe_text" -ne 0 ] || [ "$probe_json" -ne 0 ] ||
    ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/probe.json" 2>/dev/null; then
    record FAIL "probe cameras" "exit $probe_text (text), $probe_json (--json), or the JSON does not parse"
    sed 's/^/      /' "$work/probe.err"
    echo '[]' > "$work/probe.json"
else
    record PASS "probe cameras" "$(json_value "$work/probe.json" 'len(j)') video device node(s)"
fi

# The CSI sensors' capture nodes and the USB cameras, from the probe.
csi_nodes=$(json_value "$work/probe.json" '" ".join(c["path"] for c in j if c.get("driver", "").startswith("tegra") or c.get("card", "").startswith("vi-output"))')
# The USB camera to use and the size and rate to ask of it: "NODE WIDTH HEIGHT FPS".
usb_choice=$(python3 - "$work/probe.json" "$usb" <<'EOF' 2>/dev/null
import json, sys
cameras = json.load(open(sys.argv[1]))
wanted = sys.argv[2]
usable = [c for c in cameras if c.get("capture") and not c.get("error")
          and (c["path"] == wanted if wanted else c.get("bus_info", "").startswith("usb-"))]
for camera in usable:
    modes = [(s["width"], s["height"], rate)
             for f in camera.get("formats", []) if f.get("convertible")
             for s in f.get("sizes", []) for rate in s.get("fps", []) if rate <= 30.5]
    if not modes:
        continue
    preferred = [m for m in modes if m[:2] == (640, 480) and round(m[2]) == 30]
    first = [m for m in modes if m[:2] == modes[0][:2]]
    width, height, rate = preferred[0] if preferred else max(first, key=lambda m: m[2])
    print(camera["path"], width, height, f"{rate:g}")
    break
EOF
)

echo "== 2. CSI camera"
if ! command -v gst-inspect-1.0 >/dev/null; then
    record SKIP "csi://$sensor" "gst-inspect-1.0 is missing (apt-get install gstreamer1.0-tools)"
elif ! gst-inspect-1.0 nvarguscamerasrc >/dev/null 2>&1; then
    record SKIP "csi://$sensor" "no nvarguscamerasrc: not a Jetson, or JetPack multimedia is missing"
elif [ -z "$csi_nodes" ]; then
    record SKIP "csi://$sensor" "no CSI sensor node (tegra-video / vi-output) in the probe"
else
    if ! systemctl is-active --quiet nvargus-daemon 2>/dev/null; then
        echo "note: nvargus-daemon does not look active (sudo systemctl restart nvargus-daemon)"
    fi
    check_run "csi://$sensor" "csi://$sensor" 1280 720 30
fi

echo "== 3. USB camera"
if [ -z "$usb_choice" ]; then
    if [ -n "$usb" ]; then
        record FAIL "$usb" "not a capture node with a size and rate jetagent converts (see the probe)"
    else
        record SKIP "usb" "no USB camera with a size and rate jetagent converts"
    fi
else
    read -r node width height rate <<< "$usb_choice"
    check_run "v4l2://$node" "v4l2://$node" "$width" "$height" "$rate"
fi

finish
