#!/usr/bin/env bash
# Regenerates the Go code of Flowstate's plugin protocol from sdk/internal/proto/*.proto.
# Installs protoc with apt-get when it is missing and the Go generators, at pinned versions,
# into bin/tools. Run from anywhere: `make proto` or ./scripts/genproto.sh.
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.1 # generated code needs grpc >= 1.64; the module uses 1.85

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/bin/tools"
mkdir -p "$tools"

if ! command -v protoc >/dev/null 2>&1; then
	echo "protoc not found: installing it with apt-get" >&2
	if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq protobuf-compiler
fi

install_tool() { # name package version
	local bin="$tools/$1" stamp="$tools/.$1.version"
	if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$3" ]; then
		return
	fi
	echo "installing $2@$3 into $tools" >&2
	GOBIN="$tools" GOFLAGS=-mod=mod go install "$2@$3"
	echo "$3" >"$stamp"
}
install_tool protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
install_tool protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"

cd "$root/sdk/internal/proto"
PATH="$tools:$PATH" protoc \
	--proto_path=. \
	--go_out=. --go_opt=paths=source_relative \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative \
	*.proto
echo "generated: $(ls "$root"/sdk/internal/proto/*.pb.go | sed "s|$root/||" | tr '\n' ' ')" >&2
