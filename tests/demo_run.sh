# Shared by the scripts that run the demo model for a page or a measurement (tests/live_page.sh,
# tests/run_report_page.sh, tools/bench_live_encoder.sh); sourced, not run.

# Exits 77 (CTest's skip) when Debian's Chart.js, which the pages inline, is missing.
need_chart_js() {
    if [ ! -f /usr/share/javascript/chart.js/chart.min.js ]; then
        echo "skipped: Debian's Chart.js is missing (apt install libjs-chart.js)"
        exit 77
    fi
}

# The tasks: block of a config that runs the demo model of source tree SOURCE_DIR.
demo_tasks_yaml() { # SOURCE_DIR
    cat <<YAML
tasks:
  - name: shapes
    model: $1/models/shapes_cnn.onnx
    labels: $1/models/shapes_labels.txt
    preprocess: {resize: stretch, interpolation: area}
YAML
}

# Waits for `jetagent run --serve` (process PID, writing to the files given) to log its address,
# and sets `url` to it ("http://127.0.0.1:PORT/"); fails, showing the run's output, when the run
# ends first or no address comes within 30 s.
wait_for_live_url() { # PID FILE...
    wait_pid=$1
    shift
    url=
    tries=0
    while [ -z "$url" ] && [ $tries -lt 300 ]; do
        url=$(sed -n 's/.*live view on \(http:[^ ]*\).*/\1/p' "$@" | head -n 1)
        if [ -z "$url" ] && ! kill -0 "$wait_pid" 2>/dev/null; then
            echo "jetagent ended before serving:"
            cat "$@"
            exit 1
        fi
        [ -n "$url" ] || sleep 0.1
        tries=$((tries + 1))
    done
    if [ -z "$url" ]; then
        echo "no 'live view on' line from jetagent:"
        cat "$@"
        exit 1
    fi
}
