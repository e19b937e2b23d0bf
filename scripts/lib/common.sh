# SPDX-License-Identifier: BSD-2-Clause
# Shared by the shell scripts: package installation, the Release build, background processes,
# the dev broker and efu's control port.

EFU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages the build, the tests and the demo need.
EFU_PACKAGES=(
  build-essential cmake pkg-config
  librdkafka-dev libflatbuffers-dev flatbuffers-compiler libspdlog-dev libcli11-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libpng-dev
  libboost-dev libreaderwriterqueue-dev libpcap-dev libcpp-httplib-dev
  kcat procps iproute2 tcpdump graphite-carbon python3-whisper prometheus
)

# Installs whatever of the given packages (default: EFU_PACKAGES) is missing.
efu_ensure_packages() {
  local wanted=("$@")
  [ ${#wanted[@]} -gt 0 ] || wanted=("${EFU_PACKAGES[@]}")
  local missing=()
  for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

# What the browser test of efu-view's page needs (tests/scripts/view_browser_test.py; it skips
# itself without them): Debian's Chromium, driven headless over WebDriver.
EFU_BROWSER_PACKAGES=(chromium chromium-driver)

# The clang sanitizer tree (build-asan/) of scripts/test and scripts/fuzz: ASan+UBSan in every
# target and libFuzzer's coverage in all but the test programs (cmake/EfuHelpers.cmake), so one
# set of library objects serves both the unit tests and the fuzz targets. -O1 with line tables
# only (stack traces keep file:line): with the fuzz targets it builds in less than half the time
# gcc's -O2 -g tree took for the unit tests alone (docs/contributing.md); NDEBUG as in the
# Release build.
EFU_SANITIZER_PACKAGES=(clang libclang-rt-14-dev)
efu_configure_sanitized() {
  local dir=$1 flags="-O1 -gline-tables-only -DNDEBUG"
  # A tree configured with another compiler (an older build-asan/ was gcc's) starts afresh.
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "^CMAKE_CXX_COMPILER:.*clang++" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  CC=clang CXX=clang++ cmake -S "$EFU_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
    -DEFU_SANITIZE=fuzzer-no-link,address,undefined -DEFU_WERROR=OFF \
    -DEFU_BUILD_TESTS=ON -DEFU_BUILD_FUZZERS=ON -DEFU_BUILD_BENCHMARKS=OFF >/dev/null
}

# Phases of a long script, timed: efu_phase NAME ends the phase running and starts NAME;
# efu_phase_table STATUS (from an EXIT trap) ends the last one and prints every phase's wall
# time, the one that failed marked so.
EFU_PHASE_NAMES=()
EFU_PHASE_SECONDS=()
EFU_PHASE_CURRENT=""
EFU_PHASE_START=0
efu_duration() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
efu_phase_end() {
  [ -n "$EFU_PHASE_CURRENT" ] || return 0
  local took=$((SECONDS - EFU_PHASE_START))
  EFU_PHASE_NAMES+=("$EFU_PHASE_CURRENT${1:-}")
  EFU_PHASE_SECONDS+=("$took")
  echo "== ${1:+FAILED: }$EFU_PHASE_CURRENT: $(efu_duration "$took")"
  EFU_PHASE_CURRENT=""
}
efu_phase() {
  efu_phase_end
  EFU_PHASE_CURRENT=$1
  EFU_PHASE_START=$SECONDS
  echo "== $1"
}
efu_phase_table() {
  local status=$1 total=0 i
  [ "$status" -eq 0 ] && efu_phase_end || efu_phase_end " (FAILED)"
  echo "== phases (wall time, m:ss)"
  for i in "${!EFU_PHASE_NAMES[@]}"; do
    printf '  %-72s %7s\n' "${EFU_PHASE_NAMES[$i]}" "$(efu_duration "${EFU_PHASE_SECONDS[$i]}")"
    total=$((total + EFU_PHASE_SECONDS[i]))
  done
  printf '  %-72s %7s\n' "total" "$(efu_duration "$total")"
}

# efu_build DIR [cmake args...]: configure and build into DIR.
efu_build() {
  local dir=$1
  shift
  cmake -S "$EFU_ROOT" -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

# Background processes a script started (append their PIDs); efu_stop_started stops them by PID
# in reverse order of start (so efu drains and flushes before the broker goes).
EFU_PIDS=()
efu_stop_started() {
  for ((i = ${#EFU_PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${EFU_PIDS[$i]}" 2>/dev/null || true
    wait "${EFU_PIDS[$i]}" 2>/dev/null || true
  done
}

# efu_start_broker DIR: starts the dev broker build/efu/tools/efu-broker in the background (its
# output in DIR/broker.log, its PID in EFU_PIDS) and waits up to 10 s for its bootstrap file.
# Sets EFU_BOOTSTRAP to the address; if the broker does not come up, shows its log and fails.
efu_start_broker() {
  local dir=$1
  "$EFU_ROOT/build/efu/tools/efu-broker" --bootstrap-file "$dir/bootstrap" >"$dir/broker.log" 2>&1 &
  EFU_PIDS+=($!)
  for _ in $(seq 100); do [ -s "$dir/bootstrap" ] && break; sleep 0.1; done
  [ -s "$dir/bootstrap" ] || { cat "$dir/broker.log"; echo "efu-broker did not start"; return 1; }
  EFU_BOOTSTRAP=$(cat "$dir/bootstrap")
}

# efu_control PORT COMMAND: the reply line of efu's control port ("" if it does not answer).
efu_control() {
  local fd reply=""
  { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 0
  printf '%s\n' "$2" >&"$fd"
  IFS= read -r -t 5 reply <&"$fd" || true
  exec {fd}>&-
  printf '%s\n' "${reply%$'\r'}"
}

# efu_wait_control PORT: waits up to 10 s until efu's control port answers.
efu_wait_control() {
  for _ in $(seq 100); do
    [ -n "$(efu_control "$1" VERSION_GET)" ] && return 0
    sleep 0.1
  done
}
