#!/usr/bin/env bash
# Builds Ory Hydra once for the OAuth benchmark, into a cache outside the repository, and
# prints the binary's path (last line of stdout). The bench compares against a pinned release,
# so the version is fixed here, and a second run reuses the binary instead of compiling again
# (minutes on two cores).
#
# Hydra has no npm package and its prebuilt binaries are not reachable from every machine that
# runs the bench, but the Go module proxy is: the source comes from there.
set -euo pipefail

version="${HYDRA_VERSION:-v2.3.0}"
cache="${TESSERA_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera-bench}"
dir="$cache/hydra-$version"
binary="$dir/hydra"

if [[ -x "$binary" ]]; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null || { echo "build-hydra: go is not installed; the Hydra peer needs Go to build it" >&2; exit 1; }
mkdir -p "$dir"
# Built inside Hydra's own module, not as a dependency of another: its go.mod replaces
# gobuffalo/pop with Ory's fork, and replace directives apply only in the main module (as a
# dependency it fails to compile: "p.conn.Store.SQLDB undefined"). Its go.sum pins the rest.
source_dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/ory/hydra/v2@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$source_dir" ]] || { echo "build-hydra: go mod download gave no source for github.com/ory/hydra/v2@$version" >&2; exit 1; }
rm -rf "$dir/src"
cp -R "$source_dir" "$dir/src"
chmod -R u+w "$dir/src"
cd "$dir/src"
# Its other replace points hydra-client-go at ./internal/httpclient, a nested module that the
# module zip leaves out; the published hydra-client-go at the version go.mod requires stands in.
go mod edit -dropreplace github.com/ory/hydra-client-go/v2
GOFLAGS=-mod=mod go mod download github.com/ory/hydra-client-go/v2 >&2
# The tags and version stamp of Hydra's own Makefile (install-stable): sqlite is what makes
# DSN=memory work (its in-memory store is SQLite, which needs cgo).
CGO_ENABLED=1 GOFLAGS=-mod=mod nice go build -tags sqlite,sqlite_omit_load_extension -trimpath \
  -ldflags "-X github.com/ory/hydra/v2/driver/config.Version=$version" \
  -o "$binary.tmp" . >&2
mv "$binary.tmp" "$binary"
rm -rf "$dir/src"
echo "$binary"
