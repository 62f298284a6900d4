#!/usr/bin/env bash
# Builds Jaeger v2, the trace backend test/e2e/tracing.test.ts exports spans to and reads traces
# back from, and prints the binary's path:
#
#   infra/jaeger/build.sh
#
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@…` fails: Jaeger's go.mod has replace
# directives. This folder is a module that requires Jaeger as a tool instead, every module pinned
# in go.sum, so the build takes only the Go module proxy. Built once (a few minutes) into
# ~/.cache/tessera/jaeger-<version>/jaeger, with the modules in ~/.cache/tessera/go-modules.
set -euo pipefail
cd "$(dirname "$0")"
version=$(awk '$1 == "github.com/jaegertracing/jaeger" { print $2 }' go.mod)
target="$HOME/.cache/tessera/jaeger-$version/jaeger"
if [ ! -x "$target" ]; then
  go=""
  for candidate in "$(command -v go || true)" /usr/local/go/bin/go /usr/lib/go-*/bin/go; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    # Jaeger $version asks for Go 1.24.6 or later.
    if "$candidate" version | grep -Eq 'go1\.(24\.([6-9]|[1-9][0-9])|2[5-9]|[3-9][0-9])'; then go=$candidate; break; fi
  done
  [ -n "$go" ] || { echo "infra/jaeger/build.sh: Go 1.24.6 or later is needed to build Jaeger $version; found: $(go version 2>&1 || echo none)" >&2; exit 1; }
  echo "building Jaeger $version with $("$go" version) (a few minutes, once)" >&2
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  # Built into a scratch folder and moved into place whole, so a broken build is never cached.
  GOMODCACHE="$HOME/.cache/tessera/go-modules" GOTOOLCHAIN=local \
    "$go" build -o "$scratch/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger >&2
  mkdir -p "$(dirname "$target")" && mv "$scratch/jaeger" "$target"
fi
echo "$target"
