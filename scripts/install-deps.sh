#!/usr/bin/env bash
# Installs every build, test and test-bed dependency from Debian's packages,
# plus any package names given as arguments (packaging/build-deb.sh passes
# its tools). Idempotent: a second run only checks. Needs root on Debian 12.
set -euo pipefail

build_deps=(
  build-essential cmake ninja-build pkg-config git
  libsdbus-c++-dev libsdbus-c++-bin libsystemd-dev
  nlohmann-json3-dev libspdlog-dev libfmt-dev libboost-test-dev
  musl-tools
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libmsgpack-cxx-dev
)
# The go-plugin tier (tests/goplugin): HashiCorp's go-plugin client and the
# Go code generated from the driver's .proto files, built in GOPATH mode
# from Debian's Go sources (/usr/share/gocode), no network. protobuf 1.5
# (on the v2 API, which protoc-gen-go's code needs) instead of the 1.3
# that golang-google-grpc-dev would otherwise pull in.
goplugin_deps=(
  golang-go golang-github-hashicorp-go-plugin-dev golang-google-grpc-dev
  golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc
  golang-github-zclconf-go-cty-dev golang-github-hashicorp-hcl-v2-dev
)
# The bus tier starts its own dbus-daemon; the README's API reference is
# generated from the interface XML with xsltproc (a unit-tier check).
bus_deps=(dbus xsltproc)
# The system tier boots a Debian guest under qemu.
testbed_deps=(qemu-system-x86 qemu-utils mmdebstrap e2fsprogs busybox-static cpio zstd xz-utils)
# The system tier installs the .deb that packaging/build-deb.sh builds.
package_deps=(debhelper dpkg-dev lintian fakeroot)

all=("${build_deps[@]}" "${goplugin_deps[@]}" "${bus_deps[@]}" "${testbed_deps[@]}" "${package_deps[@]}" "$@")
missing=()
for p in "${all[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all ${#all[@]} packages present"
