#!/usr/bin/env bash
# Builds Litestream, which replicates the SQLite log continuously to a replica (here a folder) and
# restores it from there: test/e2e/litestream.test.ts runs docs/operations.md's continuous backup
# with it. Prints the binary's path:
#
#   infra/litestream/build.sh
#
# From the Go module proxy at a pinned version; it builds SQLite with cgo, so a C compiler is
# needed. Built once (a few minutes, most of it fetching modules) into
# ~/.cache/tessera/litestream-<version>/litestream, with the modules in ~/.cache/tessera/go-modules.
set -euo pipefail
version=v0.3.14
target="$HOME/.cache/tessera/litestream-$version/litestream"
if [ ! -x "$target" ]; then
  command -v go >/dev/null || { echo "infra/litestream/build.sh: Go is needed to build Litestream $version" >&2; exit 1; }
  echo "building Litestream $version with $(go version) (a few minutes, once)" >&2
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  # Built into a scratch folder and moved into place whole, so a broken build is never cached.
  GOBIN="$scratch" GOMODCACHE="$HOME/.cache/tessera/go-modules" GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=1 \
    go install "github.com/benbjohnson/litestream/cmd/litestream@$version" >&2
  mkdir -p "$(dirname "$target")" && mv "$scratch/litestream" "$target"
fi
echo "$target"
