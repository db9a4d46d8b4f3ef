#!/usr/bin/env bash
# jetagent's developer entry point on Debian 12: install what is missing, build, and run the demo or
# the whole test suite. The README's two commands are `tools/dev.sh demo` and `tools/dev.sh test`;
# CI runs the second (.ci/run).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/dev.sh COMMAND

  demo    install missing Debian packages, build, and run the demo (synthetic shapes, ten seconds)
  test    install missing packages, export the torchvision reference models
          (tools/export_torchvision.py into models/reference/; cached, so later runs take seconds),
          build with warnings as errors (the libraries as unity builds, JETAGENT_UNITY_BUILD),
          run every test (the vivid camera test boots a VM: it must not skip here; clang-tidy
          of the shipped code runs meanwhile at nice 19),
          package and install the .deb files for real; build with clang under AddressSanitizer and
          UndefinedBehaviorSanitizer (the fuzz targets as libFuzzer programs too) and run the
          tests labelled unit once more there, with a 10-second fuzzing run per fuzz target
          (label fuzz); cross-build for aarch64 and run the tests labelled unit under qemu-user
          (but the suites of architecture-independent code, Cli and ServiceProtocol); then
          lint (clang-format, clang-tidy's result). The slow suites, the model zoo and the VM
          run natively only. Each stage's time is printed at the end: about 50 minutes on
          two cores from a fresh clone
  fuzz SECONDS
          install missing packages, build the fuzz targets (tests/fuzz) with clang, ASan and UBSan
          into BUILD_DIR-sanitize, and run each for SECONDS (default 60), JETAGENT_JOBS at a time;
          new corpus entries and findings go to BUILD_DIR-sanitize/fuzz-work/TARGET, never into
          the repository. Prints each target's executions, coverage and findings; fails when a
          target found something
  tidy    build, then clang-tidy every source, the tests' too (CI checks the shipped code only),
          with compile commands that leave out the test programs' precompiled headers (GCC's,
          which clang cannot read)
  cross   install missing packages, make the Debian 12 arm64 sysroot, cross-build into build-aarch64
  build   install missing packages and build into build/
  package install missing packages, build for the /usr prefix and make the .deb files
          (build/jetagent_<version>_<arch>.deb, the core, build/jetagent-opencv_<version>_<arch>.deb,
          its OpenCV plugins, and build/jetagent-rtsp_<version>_<arch>.deb, its RTSP server; each
          checked by systemd/check-deb.sh)
  deps    only install missing packages
  check-tensorrt DIR [DIR...]
          compile (without linking) the TensorRT backend against each TensorRT include directory
          (NvInfer.h and NvOnnxParser.h; obtained by you, never committed) and the CUDA toolkit's
          headers (CUDAToolkit_ROOT, default /usr/local/cuda), with warnings as errors, for machines
          without TensorRT's libraries

Environment:
  JETAGENT_BUILD_DIR   build directory (default: build)
  JETAGENT_JOBS        parallel build and test jobs (default: the number of CPUs)
  JETAGENT_SKIP_SLOW   1 leaves out tests labelled slow and the model export (CI runs them)
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build_dir=${JETAGENT_BUILD_DIR:-build}
jobs=${JETAGENT_JOBS:-$(nproc)}

# What building and testing need, from Debian 12's archive; libjs-chart.js is also the HTML
# reports' Chart.js at run time (inlined into each page; the .deb depends on it).
packages=(
    cmake ninja-build g++ pkg-config git file
    libopencv-dev libyaml-cpp-dev libspdlog-dev libonnx-dev libprotobuf-dev
    libcli11-dev nlohmann-json3-dev libgtest-dev libgpiod-dev
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstrtspserver-1.0-dev
    libxnnpack-dev libpthreadpool-dev
    libjs-chart.js libcpp-httplib-dev libturbojpeg0-dev libpng-dev
    libmosquitto-dev # the mqtt plugin's client (and the MQTT test's subscriber)
)
# oneDNN, for the xnnpack backend's dense convolutions on x86-64 (ARM stays on XNNPACK).
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
    packages+=(libdnnl-dev)
fi
# The GStreamer tests' elements (videotestsrc, videoconvert, appsink; rtspsrc, JPEG and RTP
# payloaders for the RTSP reconnect test, whose server links libgstrtspserver), an X server for the live
# window's test, and the vivid VM test's emulator, initramfs tools and module tooling
# (tests/vm/vivid-test.sh); systemd-analyze and systemd-sysusers for the unit's test
# (systemd/verify-unit.sh), dpkg-shlibdeps (dpkg-dev) for the .deb's Depends, and ONNX's own node
# tests (libonnx-testdata) for the xnnpack backend's conformance test (tests/onnx_node_test.cpp);
# headless chromium opens the HTML reports (tools/check_html_page.py); node checks the scripts under
# web/ (tests/check_web_scripts.sh); the network video outputs' tests encode and decode H.264 with
# openh264 (gstreamer1.0-plugins-bad, libopenh264-7); the video file tests decode AVI MJPEG (-good),
# MP4 with MPEG-4 part 2 and H.264 (gstreamer1.0-libav), and refuse HLS and DASH playlists that
# -bad's demuxers would fetch.
# The fleet tests talk to the real servers: Prometheus (promtool checks and tests the shipped
# rules; a Prometheus on loopback evaluates the dashboard's queries and scrapes /metrics),
# node_exporter (its textfile collector reads the textfiles of finished runs) and an MQTT broker
# with its command-line clients (mosquitto, mosquitto-clients: the broker the MQTT test stops and
# restarts, tests/mqtt_e2e_test.cpp); openssl, whose command line makes the CA and certificates
# of the MQTT TLS test (tests/mqtt_tls_e2e_test.cpp).
fleet_test_packages=(prometheus prometheus-node-exporter mosquitto mosquitto-clients openssl)
test_packages=("${fleet_test_packages[@]}" gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav libopenh264-7 xvfb xauth qemu-system-x86 busybox-static cpio kmod systemd dpkg-dev
    libonnx-testdata chromium nodejs)
# /metrics and the textfiles against the real systems (tests/prometheus_e2e.py): promtool and a
# real prometheus scraping a run, node_exporter's textfile collector.
test_packages+=(prometheus prometheus-node-exporter)
lint_packages=(clang-format clang-tidy)
# The sanitizer build: clang, its sanitizer and libFuzzer runtimes, and (for oneDNN's OpenMP on
# x86-64) clang's OpenMP library.
sanitizer_packages=(clang libclang-rt-14-dev)
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
    sanitizer_packages+=(libomp-dev)
fi
# The model-zoo tests' reference exports (tools/export_torchvision.py).
model_packages=(python3-torch python3-torchvision)
cross_packages=(g++-aarch64-linux-gnu qemu-user-static mmdebstrap)

step() { printf '\n== %s\n' "$*"; }

# Stage timing: `timed NAME COMMAND...` runs one stage and records how long it took; the table of
# every stage run so far is printed when the script ends, whether it passed or failed, so CI's time
# budget (90 minutes, 65 planned) can be read off each run.
stage_names=()
stage_secs=()
stage_running=""
stage_start=0
timed() { # NAME, command...
    stage_running=$1
    stage_start=$SECONDS
    shift
    "$@"
    stage_names+=("$stage_running")
    stage_secs+=($((SECONDS - stage_start)))
    stage_running=""
}
print_stage_times() {
    local rc=$? i total=0
    tidy_stop
    if [ -n "$stage_running" ]; then
        stage_names+=("$stage_running (FAILED)")
        stage_secs+=($((SECONDS - stage_start)))
    fi
    [ ${#stage_names[@]} -eq 0 ] && return $rc
    local width=5 name
    for name in "${stage_names[@]}"; do
        [ ${#name} -gt $width ] && width=${#name}
    done
    printf '\n== stage times\n'
    for i in "${!stage_names[@]}"; do
        printf '  %-*s %4d:%02d\n' "$width" "${stage_names[$i]}" $((stage_secs[i] / 60)) $((stage_secs[i] % 60))
        total=$((total + stage_secs[i]))
    done
    printf '  %-*s %4d:%02d%s\n' "$width" total $((total / 60)) $((total % 60)) "$([ $rc -ne 0 ] && echo ' (failed)')"
    return $rc
}
trap print_stage_times EXIT

install_missing() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "dev.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    step "installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Extra configure arguments for every build of this command: `test` sets the unity build there.
build_options=()

configure_and_build() { # DIR, extra cmake arguments... [-- targets to build (default: all)...]
    local dir=$1 configure=() targets=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        configure+=("$1")
        shift
    done
    [ $# -gt 1 ] && targets=(--target "${@:2}")
    step "building in $dir"
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJETAGENT_WERROR=ON \
        "${build_options[@]}" "${configure[@]}" >/dev/null
    cmake --build "$dir" --parallel "$jobs" "${targets[@]}"
}

run_tests() { # DIR, extra ctest arguments...
    local dir=$1
    shift
    # ctest leaves a test out only when its labels match every -LE given, so the label exclusions
    # (the caller's and JETAGENT_SKIP_SLOW's) become one regular expression.
    local args=() exclude=""
    [ "${JETAGENT_SKIP_SLOW:-0}" = 1 ] && exclude=slow
    while [ $# -gt 0 ]; do
        if [ "$1" = -LE ] && [ $# -ge 2 ]; then
            exclude=${exclude:+$exclude|}$2
            shift 2
        else
            args+=("$1")
            shift
        fi
    done
    [ -n "$exclude" ] && args+=(-LE "$exclude")
    step "testing in $dir"
    ctest --test-dir "$dir" --output-on-failure --parallel "$jobs" "${args[@]}"
}

# The model zoo's ONNX files and PyTorch references, exactly what the tests labelled zoo read: the
# ten with BatchNorm folded (<model>.folded.*, the plain export torch.onnx.export makes) and, with
# BatchNorm kept (the script's default, <model>.*), the seven that have BatchNorm. The papers'
# models (--set papers, --set all) are exported on request only. Up-to-date exports are skipped.
# Under glibc's malloc tunables (zoo_malloc), as the zoo tests run (tests/CMakeLists.txt): the
# exporter's copies of hundreds of MB of weights were mostly page faults on a VM (vgg16 33.7 s,
# alexnet 12.2 s, r3d_18 15.5 s; with them 11.8, 1.4 and 7.4 s, the files byte for byte the same).
zoo_malloc=GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295
export_models() {
    step "exporting torchvision reference models (tools/export_torchvision.py)"
    env "$zoo_malloc" /usr/bin/python3 tools/export_torchvision.py --fold-batchnorm
    env "$zoo_malloc" /usr/bin/python3 tools/export_torchvision.py mobilenet_v2 resnet18 resnet50 \
        densenet121 shufflenet_v2_x1_0 resnext50_32x4d r3d_18
    # The QDQ test's model (ModelZooQdq): resnet18 quantized by PyTorch, exported as QDQ.
    env "$zoo_malloc" /usr/bin/python3 tools/make_qdq_model.py resnet18
}

# The sanitizer build: clang with AddressSanitizer and UndefinedBehaviorSanitizer, the libraries
# instrumented for libFuzzer and the fuzz targets linked with it (tests/fuzz). Naming the compiler
# makes CMake start afresh in a directory that an older GCC configuration left.
# It runs the tests labelled unit and fuzz only, so the slow suites, the model zoo and the
# benchmarks are not built (JETAGENT_ALL_TESTS=OFF). OPT is the optimisation level, with line
# tables (what ASan's reports use): `test` builds at -O0, which clang compiles in about half of
# -O1's time (src/app/cli.cpp: 18 s against 40 s) and which the unit tests run fast enough at
# (XNNPACK and OpenCV, where the heavy work is, are Debian's optimised libraries); `fuzz` builds
# at -O1, where libFuzzer gets through more inputs a second.
sanitize_build() { # OPT, [targets to build (default: all)...]
    local opt=$1
    shift
    configure_and_build "$build_dir-sanitize" -DCMAKE_CXX_COMPILER=clang++ -DJETAGENT_SANITIZE=ON \
        -DJETAGENT_ALL_TESTS=OFF -DJETAGENT_TESTS_PER_SUITE=ON \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$opt -gline-tables-only -DNDEBUG" -- "$@"
}

# The sanitizers' settings for tests and fuzzing: leaks included. LeakSanitizer records a stack
# for every allocation; the fast unwinder follows frame pointers, which GLib's frames lack, so its
# stacks stop at g_malloc. With it (sanitizer_env), what GLib allocates is not told apart: the
# suppressions (tests/lsan-fast.supp) leave out every leak whose stack is in GLib, GLib's own
# library-constructor buffer among them; everything allocated by our code is checked. The suites
# that drive our GStreamer code (gstreamer_suites) run with the slow unwinder (sanitizer_env_full):
# full stacks, so only that constructor buffer is left out (tests/lsan.supp) and a GLib string
# or object we fail to free is reported. The slow unwinder made the whole stage 2.5 times slower
# (AgentRun: 63 s against 19 s), which is why it is kept to those suites.
# intercept_tls_get_addr=0: the sanitizer runtime's tracking of dynamic TLS (the thread-local
# blocks of libraries loaded with dlopen: the CPU engine's plugin, and through it OpenMP and
# oneDNN) misreads glibc's blocks and LeakSanitizer's scan then crashes at exit ("Tracer caught
# signal 11", google/sanitizers#1322), in every process that built an engine. Without the
# tracking, those blocks are not scanned as roots: a pointer kept only there would show as a
# leak, never hide one.
sanitizer_env=(
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:intercept_tls_get_addr=0
    LSAN_OPTIONS="suppressions=$root/tests/lsan-fast.supp:fast_unwind_on_malloc=1"
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
)
sanitizer_env_full=(
    "${sanitizer_env[@]}"
    LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:fast_unwind_on_malloc=0"
)
gstreamer_suites='^GStreamer'

# The tests labelled unit and fuzz in the sanitizer build: the GStreamer suites with full stacks,
# then the rest.
sanitizer_tests() {
    (
        export "${sanitizer_env_full[@]}"
        run_tests "$build_dir-sanitize" -L '^(unit|fuzz)$' -R "$gstreamer_suites"
    )
    (
        export "${sanitizer_env[@]}"
        run_tests "$build_dir-sanitize" -L '^(unit|fuzz)$' -E "$gstreamer_suites"
    )
}

# Every fuzz target for SECONDS, JETAGENT_JOBS at a time, from the list the build writes
# (tests/fuzz/CMakeLists.txt: NAME PROGRAM INPUT_DIR... per line); then a line per target.
fuzz_all() { # SECONDS
    local seconds=$1 dir="$build_dir-sanitize" list name words failed=()
    list="$dir/tests/fuzz/fuzz_targets.txt"
    [ -f "$list" ] || { echo "dev.sh: $list is missing: is $dir a clang sanitizer build?" >&2; exit 1; }
    step "fuzzing each target for $seconds s, $jobs at a time (corpus growth and findings: $dir/fuzz-work)"
    while read -r -a words; do
        env "${sanitizer_env[@]}" tests/fuzz/run_fuzzer.sh "${words[1]}" "${words[0]}" "$seconds" \
            "$dir/fuzz-work/${words[0]}" "${words[@]:2}" >/dev/null 2>&1 &
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
            wait -n || true
        done
    done <"$list"
    wait || true
    step "fuzzing results ($seconds s per target)"
    while read -r name _; do
        cat "$dir/fuzz-work/$name/summary"
        [ "$(cat "$dir/fuzz-work/$name/result")" = ok ] || failed+=("$name")
    done <"$list"
    if [ ${#failed[@]} -gt 0 ]; then
        for name in "${failed[@]}"; do
            printf '\n== %s: findings (inputs in %s)\n' "$name" "$dir/fuzz-work/$name/findings" >&2
            cat "$dir/fuzz-work/$name/report" >&2
        done
        return 1
    fi
}

cross_build() { # extra cmake arguments...
    install_missing "${cross_packages[@]}"
    step "arm64 sysroot (cross/make-debian-sysroot.sh)"
    local sysroot
    sysroot=$(cross/make-debian-sysroot.sh)
    configure_and_build "$build_dir-aarch64" -DCMAKE_TOOLCHAIN_FILE="$root/cross/aarch64-linux-gnu.cmake" \
        -DJETAGENT_SYSROOT="$sysroot" "$@"
}

# The .deb files of a build: configured for /usr (the unit and /etc/jetagent paths are fixed at
# configure time), packed by CPack into the build directory, one per package (the core jetagent,
# jetagent-opencv, and jetagent-tensorrt where that plugin is built), then each checked.
package() { # DIR, Debian architecture
    local dir=$1 arch=$2
    step "packaging $dir ($arch)"
    cmake -S . -B "$dir" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
    rm -f "$dir"/jetagent_*.deb "$dir"/jetagent-*_*.deb
    cpack --config "$dir/CPackConfig.cmake" -B "$dir" >"$dir/cpack.log" 2>&1 ||
        { cat "$dir/cpack.log" >&2; exit 1; }
    local deb
    for deb in "$dir"/jetagent_*_"$arch".deb "$dir"/jetagent-opencv_*_"$arch".deb \
        "$dir"/jetagent-rtsp_*_"$arch".deb; do
        [ -f "$deb" ] || { echo "cpack made no $(basename "$deb") in $dir" >&2; exit 1; }
    done
    for deb in "$dir"/jetagent_*_"$arch".deb "$dir"/jetagent-*_*_"$arch".deb; do
        systemd/check-deb.sh "$deb" "$arch"
    done
}

# The packages installed, run, reinstalled, removed and purged on this machine (as root): the
# core alone, then with jetagent-opencv.
install_test() { # DIR
    local arch core opencv rtsp start
    arch=$(dpkg --print-architecture)
    core=$(ls "$1"/jetagent_*_"$arch".deb)
    opencv=$(ls "$1"/jetagent-opencv_*_"$arch".deb)
    rtsp=$(ls "$1"/jetagent-rtsp_*_"$arch".deb)
    step "installing $core, $opencv and $rtsp for real (systemd/test-deb-install.sh)"
    start=$(date +%s)
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" systemd/test-deb-install.sh "$core" "$opencv" "$rtsp"
    echo "install test: $(($(date +%s) - start)) s"
}

# clang-tidy of the code that ships (base, hal, engines, plugins, power, src): about a third of
# what tidying the tests too costs, which was the largest single item of CI's CPU and slowed every test beside it
# even at nice 19; `tools/dev.sh tidy` checks the tests as well (before committing them). It starts
# in the background at nice 19 as soon as the build has written compile_commands.json and the
# generated headers, and takes the cycles that the model export, the tests (many of them wait on
# servers, VMs and clocks) and the packaging leave idle; `lint`, the last stage, runs clang-format
# and waits for it. Its own session, so that a failing run can stop it with everything it started.
# Without clang-analyzer's checks (clang-analyzer-*, which `tools/dev.sh tidy` runs, with the rest,
# before committing): they were half of its CPU time (src/agent/run/pipeline.cpp: 17 of 33 CPU-s), and
# with them the 98 sources' 3,000-odd CPU-s no longer fitted in the cycles the stages leave idle,
# so that the last stage waited for most of it with both cores.
tidy_sources='(base|hal|engines|plugins|power|src|web)/.*\.cpp$'
tidy_pid=""
tidy_start() {
    step "clang-tidy starts in the background (nice 19; its log: $build_dir/clang-tidy.log)"
    # Every finding is an error (.clang-tidy); the build's compile_commands.json gives the flags,
    # with one entry per source where the build compiles them in batches (tools/compile_db.py).
    mkdir -p "$build_dir/tidy-shipped"
    /usr/bin/python3 tools/compile_db.py "$build_dir/compile_commands.json" \
        "$build_dir/tidy-shipped/compile_commands.json"
    # A new session is a new scheduler autogroup (Linux's sched_autogroup, on in Debian's kernel):
    # a plain nice would then rank clang-tidy only within its own group, which shares the CPU
    # equally with everything else, so the group itself gets nice 19 (/proc/self/autogroup).
    setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' clang-tidy \
        run-clang-tidy-14 -p "$build_dir/tidy-shipped" -j "$jobs" -quiet '-checks=-clang-analyzer-*' \
        "$root/$tidy_sources" >"$build_dir/clang-tidy.log" 2>&1 &
    tidy_pid=$!
}
tidy_stop() {
    if [ -n "$tidy_pid" ]; then
        kill -- "-$tidy_pid" 2>/dev/null || true
        tidy_pid=""
    fi
}
lint() {
    step "clang-format"
    git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run -Werror
    step "clang-tidy (waiting for the background run to finish)"
    local rc=0
    wait "$tidy_pid" || rc=$?
    tidy_pid=""
    if [ $rc -ne 0 ]; then
        grep -E 'warning:|error:' "$build_dir/clang-tidy.log" >&2 || tail -20 "$build_dir/clang-tidy.log" >&2
        exit 1
    fi
}

case "${1:-}" in
demo)
    install_missing "${packages[@]}"
    configure_and_build "$build_dir" -DJETAGENT_BUILD_TESTS=OFF
    step "demo: jetagent run --config firmware-config/demo.yaml"
    "$build_dir/src/jetagent" run --config firmware-config/demo.yaml
    ;;
test)
    # All three builds compile each library's sources in batches (cmake/unity_build.cmake): the
    # headers every source includes are parsed once a batch, not once a source. The build
    # directories keep the setting for later incremental builds; clang-tidy still checks each
    # source on its own (tools/compile_db.py).
    build_options=(-DJETAGENT_UNITY_BUILD=ON)
    timed "install packages" install_missing "${packages[@]}" "${test_packages[@]}" "${lint_packages[@]}" \
        "${sanitizer_packages[@]}" "${cross_packages[@]}" "${model_packages[@]}"
    # Line tables only (-g1), as the test programs already are: full debug information was a third
    # of a shipped source's compile time, and a CI failure's backtrace needs files and lines only.
    # `tools/dev.sh build` gives the build type's own flags (-O2 -g) back.
    timed "build (native)" configure_and_build "$build_dir" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
    tidy_start
    if [ "${JETAGENT_SKIP_SLOW:-0}" != 1 ]; then
        timed "export reference models" export_models
    fi
    # The vivid VM test must run here, not skip: a missing tool is a failure. The RTSP outage test
    # stops its server 8 times here (20 by default: about three minutes of a run with every core
    # kept busy, the soak to run before changing the reconnect code).
    JETAGENT_REQUIRE_VM=1 JETAGENT_RTSP_OUTAGES=8 timed "tests (native, all labels)" run_tests "$build_dir"
    timed "package (amd64)" package "$build_dir" "$(dpkg --print-architecture)"
    timed "package install test (apt, amd64)" install_test "$build_dir"
    # The unit tests once more under AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer,
    # built by clang; the fuzz targets are libFuzzer programs in this build, and each fuzzes for
    # 10 s (label fuzz). The slow suites, the model zoo and the VM run natively only: under ASan
    # they took most of this stage (9 of its 14 minutes before).
    timed "build (ASan+UBSan, clang -O0; unit tests)" sanitize_build -O0
    timed "tests (ASan+UBSan: unit, fuzz)" sanitizer_tests
    # aarch64: the same sources cross-compiled, the unit tests run under qemu-user (10-40x slower
    # than native, so the slow label stays out and its suites are not built). qemu-user hands every
    # system call to this machine's kernel, so what it adds is the arm64 code: the engines, kernels,
    # preprocessing, pixel conversion, lock-free rings, parsers (char is unsigned there) and the
    # binary's own runs (AgentRun, LocalFilesRun, PowerCommand, ...). The suites of
    # architecture-independent code (configuration, logs, reports and pages, compare and sweep,
    # GStreamer runs, the live view, protocols against fakes) are not built there
    # (-DJETAGENT_PORTABLE_TESTS=OFF); and the CLI's usage and message tests (Cli), the service
    # protocol's timed tests (ServiceProtocol), which start the binary dozens of times, and the
    # hardening runs (Hardening: full disks, file size limits, stop signals, closed descriptors,
    # the kernel's answers to system calls that qemu-user passes to this machine's; its two
    # full-disk runs took 200 of the stage's 970 CPU-seconds) are left out of the run. All of
    # them run natively and under the sanitizers.
    # Line tables only (-g1): this build's binaries run under qemu here and its package is stripped,
    # and full debug information was a quarter of its compile time. `tools/dev.sh cross` builds with -g.
    timed "build (aarch64 cross; unit tests)" cross_build -DJETAGENT_ALL_TESTS=OFF -DJETAGENT_TESTS_PER_SUITE=ON \
        -DJETAGENT_PORTABLE_TESTS=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
    JETAGENT_SKIP_SLOW=1 timed "tests (aarch64 under qemu: unit but portable suites, Cli, ServiceProtocol, Hardening)" \
        run_tests "$build_dir-aarch64" -E '^(Cli|ServiceProtocol|Hardening)\.'

    timed "package (arm64)" package "$build_dir-aarch64" arm64
    timed "lint (clang-format; clang-tidy's rest)" lint
    step "all tests passed"
    ;;
cross)
    cross_build -UCMAKE_CXX_FLAGS_RELWITHDEBINFO # the build type's own flags (-O2 -g), whatever `test` left
    ;;
fuzz)
    seconds=${2:-60}
    [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz takes a number of seconds, not '$seconds'" >&2; exit 2; }
    install_missing "${packages[@]}" "${sanitizer_packages[@]}"
    sanitize_build -O1 jetagent_fuzz_targets
    fuzz_all "$seconds"
    ;;
build)
    install_missing "${packages[@]}"
    configure_and_build "$build_dir" -UCMAKE_CXX_FLAGS_RELWITHDEBINFO # -O2 -g, whatever `test` left
    ;;
package)
    install_missing "${packages[@]}" dpkg-dev
    configure_and_build "$build_dir" -DCMAKE_INSTALL_PREFIX=/usr
    package "$build_dir" "$(dpkg --print-architecture)"
    ;;
tidy)
    install_missing "${packages[@]}" "${lint_packages[@]}"
    configure_and_build "$build_dir"
    step "clang-tidy of every source, tests included"
    # The test programs' precompiled headers are GCC's, which clang cannot read: clang-tidy gets the
    # compile commands without them (so a test source must include what it uses, as it must to
    # build with -DJETAGENT_FAST_TEST_BUILD=OFF), one entry per source (tools/compile_db.py).
    mkdir -p "$build_dir/tidy"
    /usr/bin/python3 tools/compile_db.py "$build_dir/compile_commands.json" \
        "$build_dir/tidy/compile_commands.json" --without-pch
    run-clang-tidy-14 -p "$build_dir/tidy" -j "$jobs" -quiet "$root/(base|hal|engines|plugins|power|src|tests|web)/.*\.cpp$"
    ;;
check-tensorrt)
    shift
    [ $# -ge 1 ] || { echo "check-tensorrt needs at least one TensorRT include directory" >&2; exit 2; }
    install_missing "${packages[@]}"
    for headers in "$@"; do
        headers=$(cd "$headers" && pwd)
        version=$(grep -E '^#define (NV_TENSORRT_(MAJOR|MINOR|PATCH)|TRT_(MAJOR|MINOR|PATCH)_ENTERPRISE) +[0-9]+' \
            "$headers/NvInferVersion.h" | awk '{print $3}' | head -3 | paste -sd.)
        step "TensorRT backend against $headers (TensorRT $version)"
        dir="$build_dir-tensorrt-check"
        cmake -S . -B "$dir" -G Ninja -DJETAGENT_WERROR=ON -DJETAGENT_BUILD_TESTS=OFF \
            -DJETAGENT_TENSORRT=OFF -DJETAGENT_TENSORRT_CHECK_HEADERS="$headers" >/dev/null
        rm -rf "$dir/plugins/tensorrt/CMakeFiles/jetagent_tensorrt_check.dir"
        cmake --build "$dir" --target jetagent_tensorrt_check -j "$jobs"
    done
    step "the TensorRT backend compiles against every version given"
    ;;
deps)
    install_missing "${packages[@]}" "${test_packages[@]}" "${lint_packages[@]}" \
        "${sanitizer_packages[@]}" "${cross_packages[@]}"
    ;;
-h | --help | help)
    usage
    ;;
*)
    usage >&2
    exit 2
    ;;
esac
