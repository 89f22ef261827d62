#!/usr/bin/env bash
# Compares the driver's .proto files (src/nomad/proto) with Nomad's and
# go-plugin's current ones, by what is on the wire (tests/goplugin/protodiff):
# every message, field number, type, enum value, reserved field and RPC.
# Needs both sources, which the build does not have: a checkout or a bare
# git directory of each (read at HEAD), e.g.
#   bash scripts/nomad-proto-check.sh ~/src/nomad ~/src/go-plugin
# Prints the differences and exits 1 when there are any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -eq 2 ]] || { echo "usage: $0 NOMAD_SOURCE GO_PLUGIN_SOURCE" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A file of a source tree: from the work tree, else from the git directory at HEAD.
fetch() {
    local src=$1 path=$2
    mkdir -p "$tmp/up/$(dirname "$path")"
    if [[ -f "$src/$path" ]]; then
        cp "$src/$path" "$tmp/up/$path"
    else
        git --git-dir="$src" show "HEAD:$path" >"$tmp/up/$path" 2>/dev/null ||
            git -C "$src" show "HEAD:$path" >"$tmp/up/$path"
    fi
}
nomad=(plugins/drivers/proto/driver.proto plugins/base/proto/base.proto plugins/shared/hclspec/hcl_spec.proto
       plugins/shared/structs/proto/attribute.proto plugins/shared/structs/proto/recoverable_error.proto)
goplugin=(internal/plugin/grpc_broker.proto internal/plugin/grpc_controller.proto internal/plugin/grpc_stdio.proto)
for p in "${nomad[@]}"; do fetch "$1" "$p"; done
for p in "${goplugin[@]}"; do fetch "$2" "$p"; done

protoc -I"$tmp/up" --include_imports --descriptor_set_out="$tmp/upstream.pb" \
    plugins/drivers/proto/driver.proto plugins/base/proto/base.proto \
    plugins/shared/structs/proto/recoverable_error.proto "${goplugin[@]}"
protoc -I"$root/src/nomad/proto" --include_imports --descriptor_set_out="$tmp/ours.pb" \
    driver.proto base.proto recoverable_error.proto plugin.proto
cd "$root/tests/goplugin/protodiff"
GO111MODULE=off GOFLAGS= GOPROXY=off GOPATH=/usr/share/gocode GOCACHE="${GOCACHE:-$tmp/go-cache}" \
    go run . "$tmp/upstream.pb" "$tmp/ours.pb"
