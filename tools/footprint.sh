#!/bin/bash
# jetagent's footprint against its budgets (issue 40): shared objects mapped, start-up time and
# memory of `jetagent --version`, the memory and the libraries of the 30 fps demo and of the service
# configuration, and what installing the package pulls onto a minimal Debian 12. A benchmark, not a
# test: it prints the configuration beside every figure, each figure beside its budget, PASS or OVER.
#
#   tools/footprint.sh [--binary PATH] [--runs N] [--frames N] [--service-seconds S] [--quick]
#                      [--deb PATH] [--no-deb] [--no-service]
#
#   --binary PATH         the jetagent to measure (build/src/jetagent)
#   --runs N              timed runs of `--version` (20); the median is the figure
#   --frames N            frames of the demo (300, ten seconds at 30 fps)
#   --service-seconds S   how long the service configuration runs before its RSS is read (600)
#   --quick               a short look: 5 timed runs, 90 demo frames, the service for 20 s
#   --deb PATH            the package to install in simulation (else its Depends are derived from
#                         the binary with dpkg-shlibdeps, as the packaging does)
#   --no-deb, --no-service   leave those parts out
#
# How each figure is taken (tools/footprint_probe.py does the reading):
# - Shared objects: `--version` runs under ptrace, stopped by the kernel at its exit
#   (PTRACE_O_TRACEEXIT: after main returned, before the address space goes), and the distinct
#   mapped files named *.so* in /proc/PID/maps are counted there: the dynamic loader's, the
#   libraries it mapped and any dlopen()ed later. Only the exit is traced, nothing else.
# - Wall time: from posix_spawn to the end of wait4, median of --runs runs, stdout to /dev/null.
# - Peak RSS: the kernel's high-water mark for the child (ru_maxrss from wait4), in MiB.
# - Forbidden libraries (Qt, X11, libxcb, GDAL, libavcodec, OpenCV's highgui, videoio, imgcodecs,
#   dnn; the list is in footprint_probe.py, shared with the CTest check): /proc/PID/maps read every
#   100 ms while the run goes on, every file seen in any reading.
# - The service: systemd/agent.yaml.in with the source tree's models and a scratch cache and log
#   directory, on a fixture Orin Nano's sysfs tree (`jetagent power --fixture`), as the unit runs it
#   but from the build tree; VmRSS after --service-seconds, then SIGTERM (as `systemctl stop`).
# - Packages: `apt-get install --simulate` against a dpkg status file that holds a minimal Debian 12
#   (what debootstrap's minbase installs: the Priority: required packages and apt, with their
#   dependencies, without Recommends), made from this machine's apt lists; nothing is downloaded
#   and nothing installed. Counted with Recommends (apt's default) and without; the installed
#   size is the sum of the Installed-Size of the packages apt would add (and the .deb's own).
#
# The budgets are the issue's, for this 2-core development VM: 40 shared objects, 15 ms and 15 MiB
# for `--version`, 35 MiB peak for the demo, no forbidden library in a headless run.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
binary=$root/build/src/jetagent
runs=20 frames=300 service_seconds=600 deb="" do_deb=1 do_service=1
while [ $# -gt 0 ]; do
    case $1 in
    --binary) binary=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --service-seconds) service_seconds=$2; shift 2 ;;
    --quick) runs=5 frames=90 service_seconds=20; shift ;;
    --deb) deb=$2; shift 2 ;;
    --no-deb) do_deb=0; shift ;;
    --no-service) do_service=0; shift ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "footprint.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$binary" ] || { echo "footprint.sh: no jetagent at $binary (build it, or give --binary)" >&2; exit 2; }
case $runs$frames in *[!0-9]*) echo "footprint.sh: --runs and --frames take whole numbers" >&2; exit 2 ;; esac
[ -z "$deb" ] || [ -f "$deb" ] || { echo "footprint.sh: --deb $deb: no such file" >&2; exit 2; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
python=/usr/bin/python3
[ -x $python ] || python=python3
probe() { "$python" "$root/tools/footprint_probe.py" "$@"; }
value() { sed -n "s/^$1=//p" | head -n 1; } # KEY: its value in the probe's key=value lines

work=$(mktemp -d /tmp/jetagent-footprint.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The configuration every figure belongs to.
build_dir=$(dirname "$(dirname "$binary")")
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
commit=$(git -C "${source_dir:-$root}" describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
# shellcheck source=/dev/null
. /etc/os-release
echo "== jetagent footprint =="
echo "binary     $binary ($("$binary" --version), built $(date -u -r "$binary" +%FT%TZ))"
echo "build      ${build_type:-unknown}, from ${source_dir:-unknown} (that checkout is now at $commit; the binary names the commit it was built from above)"
echo "machine    $(uname -m), ${cpu:-unknown CPU}, $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); $PRETTY_NAME, Linux $(uname -r)"
echo "load       $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) when measuring began"
echo "measured   $(date -u +%FT%TZ)"
echo

passed=0 judged=0
# NAME FIGURE BUDGET UNIT: one line, PASS when FIGURE <= BUDGET.
judge() {
    local verdict=OVER
    if awk -v f="$2" -v b="$3" 'BEGIN { exit !(f <= b) }'; then verdict=PASS; passed=$((passed + 1)); fi
    judged=$((judged + 1))
    printf '  %-50s %10s %-8s budget %6s %-8s %s\n' "$1" "$2" "$4" "$3" "$4" "$verdict"
}
# NAME PROBE-OUTPUT: the forbidden-library rule, PASS when none was mapped.
judge_forbidden() {
    local hits
    hits=$(printf '%s\n' "$2" | sed -n 's/^forbidden=//p')
    judged=$((judged + 1))
    if [ -z "$hits" ]; then
        passed=$((passed + 1))
        printf '  %-50s %10s %-8s budget %6s %-8s PASS\n' "$1" 0 libs 0 libs
    else
        printf '  %-50s %10s %-8s budget %6s %-8s OVER\n' "$1" "$(printf '%s\n' "$hits" | wc -l)" libs 0 libs
        printf '%s\n' "$hits" | sed 's/: .*\//: /' | sort | awk -F': ' '
            { names[$1] = names[$1] (names[$1] ? ", " : "") $2 }
            END { for (n in names) printf "      %-16s %s\n", n, names[n] }' | sort
    fi
}

echo "jetagent --version"
out=$(probe exit-maps "$binary" --version)
judge "shared objects mapped at exit" "$(value shared_objects <<<"$out")" 40 objects
out=$(probe time "$runs" "$binary" --version)
judge "wall time, median of $(value runs <<<"$out") (min $(value wall_ms_min <<<"$out"), max $(value wall_ms_max <<<"$out"))" \
    "$(value wall_ms_median <<<"$out")" 15 ms
judge "peak RSS (median of the runs)" "$(value peak_rss_mb_median <<<"$out")" 15 MiB
echo

# The demo as the README runs it, its logs kept out of the source tree.
echo "the demo: jetagent run -c firmware-config/demo.yaml --frames $frames (30 fps, paced)"
out=$(probe watch 0 "$binary" -q run -c "$root/firmware-config/demo.yaml" --frames "$frames" \
    --log-dir "$work/demo-logs")
[ "$(value exit_code <<<"$out")" = 0 ] || echo "  the demo failed (exit $(value exit_code <<<"$out"))"
judge "peak RSS over $(value seconds <<<"$out") s" "$(value peak_rss_mb <<<"$out")" 35 MiB
judge_forbidden "forbidden libraries ($(value maps_reads <<<"$out") readings of the maps)" "$out"
echo "  (shared objects seen mapped: $(value shared_objects <<<"$out"))"
echo

if [ "$do_service" = 1 ]; then
    echo "the service: systemd/agent.yaml.in on a fixture Orin Nano (JetPack 6) for $service_seconds s"
    "$binary" -q power --fixture orin-nano-jp6 --sysfs-root "$work/board" -d 0.2 >/dev/null
    mkdir -p "$work/cache" "$work/service-logs"
    sed -e "s|@JETAGENT_MODELS_DIR@|$root/models|g" -e "s|@JETAGENT_CACHE_DIR@|$work/cache|g" \
        -e "s|@JETAGENT_LOG_DIR@|$work/service-logs|g" -e "s|@[A-Z_]*@|(unused)|g" \
        -e "s|^power:|power:\n  sysfs_root: $work/board|" \
        "$root/systemd/agent.yaml.in" >"$work/agent.yaml"
    out=$(probe watch "$service_seconds" "$binary" -q run -c "$work/agent.yaml")
    [ "$(value exit_code <<<"$out")" = 0 ] ||
        echo "  the service did not stop cleanly on SIGTERM (exit $(value exit_code <<<"$out"))"
    printf '  %-50s %10s %-8s (no budget; the demo'"'"'s is 35 MiB peak)\n' \
        "RSS after $service_seconds s" "$(value rss_mb_at_end <<<"$out")" MiB
    printf '  %-50s %10s %-8s\n' "peak RSS" "$(value peak_rss_mb <<<"$out")" MiB
    judge_forbidden "forbidden libraries ($(value maps_reads <<<"$out") readings of the maps)" "$out"
    echo
fi

# Sums the Installed-Size (KiB) of the packages in apt-get's "Inst NAME (VERSION ..." lines.
installed_kib() {
    local specs
    specs=$(sed -nE 's/^Inst ([^ ]+) \(([^ ]+) .*/\1=\2/p')
    [ -n "$specs" ] || { echo 0; return; }
    # shellcheck disable=SC2086 # one argument per package
    apt-cache show --no-all-versions $specs 2>/dev/null | awk '/^Installed-Size:/ { s += $2 } END { print s + 0 }'
}

if [ "$do_deb" = 1 ]; then
    echo "installing the package on a minimal Debian 12 (apt-get install --simulate, this machine's apt lists)"
    # The minimal system: what apt would install on an empty one for the required packages and apt.
    required=$(apt-cache dumpavail | awk -v RS= '/\nPriority: required/ || /^Package: apt\n/ {
        sub(/^Package: /, ""); sub(/\n.*/, ""); print }' | sort -u)
    : >"$work/empty.status"
    # shellcheck disable=SC2086 # one argument per package
    apt-get -s -q -o Dir::State::status="$work/empty.status" -o APT::Install-Recommends=false \
        install $required 2>/dev/null | grep '^Inst ' >"$work/minbase.inst" || true
    # shellcheck disable=SC2046 # one argument per package
    apt-cache show --no-all-versions $(sed -nE 's/^Inst ([^ ]+) \(([^ ]+) .*/\1=\2/p' "$work/minbase.inst") \
        2>/dev/null | awk '/^Package:/ { print; print "Status: install ok installed"; next } { print }' \
        >"$work/minbase.status"
    echo "  minimal system: $(grep -c '^Package:' "$work/minbase.status") packages (debootstrap --variant=minbase's choice, resolved by apt)"
    if [ -n "$deb" ]; then
        what=("$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")")
        own_kib=$(dpkg-deb -f "$deb" Installed-Size)
        echo "  package    $deb ($(dpkg-deb -f "$deb" Version))"
        echo "  Depends    $(dpkg-deb -f "$deb" Depends)"
    else
        # The package's Depends as the packaging makes them: dpkg-shlibdeps on the binary and the
        # core package's plugins beside it (GStreamer's sources, the live view, the CPU engine),
        # and the extra ones systemd/package.cmake names.
        mkdir -p "$work/shlibdeps/debian"
        printf 'Source: jetagent\n\nPackage: jetagent\nArchitecture: any\n' >"$work/shlibdeps/debian/control"
        objects=("$binary")
        for plugin in gstreamer live xnnpack; do
            for found in "$(dirname "$binary")"/../lib/jetagent/plugins/jetagent-$plugin.so \
                "$(dirname "$binary")"/../plugins/"$plugin"/jetagent-$plugin.so; do
                [ -f "$found" ] && { objects+=("$found"); break; }
            done
        done
        depends=$(cd "$work/shlibdeps" && dpkg-shlibdeps -O "${objects[@]/#/-e}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
        extra=$(sed -nE 's/^set\(JETAGENT_DEB_EXTRA_DEPENDS "?([^")]*)"?\)/\1/p' "$root/systemd/package.cmake")
        depends="$depends${extra:+, $extra}"
        mapfile -t what < <(printf '%s\n' "$depends" | tr ',' '\n' | sed -E 's/\(.*\)//; s/[[:space:]]//g' | grep .)
        own_kib=$(($(stat -c %s "${objects[@]}" | awk '{ t += $1 } END { print t }') / 1024))
        echo "  package    none given (--deb): its Depends derived with dpkg-shlibdeps from ${objects[*]}"
        echo "  Depends    $depends"
    fi
    for recommends in true false; do
        apt-get -s -q -o Dir::State::status="$work/minbase.status" \
            -o APT::Install-Recommends=$recommends install "${what[@]}" >"$work/sim.txt" 2>&1 || true
        if ! grep -q '^Inst ' "$work/sim.txt"; then
            echo "  apt-get could not resolve the install:"; sed 's/^/    /' "$work/sim.txt" | tail -n 5
            break
        fi
        count=$(grep '^Inst ' "$work/sim.txt" | grep -vc '^Inst jetagent ' || true)
        kib=$(( $(installed_kib <"$work/sim.txt") + own_kib ))
        label=$([ $recommends = true ] && echo "with Recommends (apt's default)" || echo "without Recommends")
        printf '  %-50s %10s %-8s %s MiB installed\n' "packages added, $label" "$count" packages \
            "$(awk -v k="$kib" 'BEGIN { printf "%.0f", k / 1024 }')"
    done
    grep -E '^Inst (libqt5|libx11-6 |libxcb1 |libgdal|libavcodec|libopencv-(highgui|videoio|imgcodecs|dnn))' \
        "$work/sim.txt" | awk '{ printf "%s%s", (n++ ? ", " : "  forbidden among them (without Recommends): "), $2 } END { if (n) print "" }'
    echo
fi

echo "$passed of $judged figures within budget"
