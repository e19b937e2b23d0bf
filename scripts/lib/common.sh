# SPDX-License-Identifier: BSD-2-Clause
# Shared by the scripts: package installation and the Release build.

EFU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages the build, the tests and the demo need.
EFU_PACKAGES=(
  build-essential cmake pkg-config
  librdkafka-dev libflatbuffers-dev flatbuffers-compiler libspdlog-dev libcli11-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libpng-dev
  libboost-dev libreaderwriterqueue-dev libpcap-dev
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

# efu_build DIR [cmake args...]: configure and build into DIR.
efu_build() {
  local dir=$1
  shift
  cmake -S "$EFU_ROOT" -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}
