#!/usr/bin/env bash
# The whole test suite: formatting, vet, staticcheck, the static build, every
# Go test (unit, store crash, testscript against the real binary, Go MCP
# clients), the race detector over the concurrent packages, and the npm MCP
# clients against the real binary (scripts/interop.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...
go vet -tags etcd ./...

echo "== staticcheck"
# Pinned; go run builds it once into the build cache (the module proxy must
# be reachable the first time).
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags etcd ./...

echo "== go.mod is tidy"
go mod tidy -diff

echo "== static build"
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -o bin/rukh .

echo "== go test"
go test -count=1 -tags etcd ./...

echo "== go test -race (kernel, store, mcpcore, mcpstdio, mcphttp)"
go test -race -count=1 ./kernel/ ./store/ ./mcpcore/ ./mcpstdio/ ./mcphttp/

if [ -x scripts/interop.sh ]; then
  echo "== interop (npm MCP clients)"
  scripts/interop.sh
fi
