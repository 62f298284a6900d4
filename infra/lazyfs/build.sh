#!/usr/bin/env bash
# Builds LazyFS, the FUSE file system the power-loss tests run SQLite on (it keeps writes that were
# not fsynced in its own cache and drops them on command), and prints the binary's path:
#
#   infra/lazyfs/build.sh
#
# The source is vendored in vendor/ at the commit COMMIT names (README.md says what and why).
# Upstream's CMake files download toml11 and spdlog (and googletest for its tests): here the tests
# are off and FetchContent is pointed at debian-deps/, which takes Debian's libtoml11-dev and
# libspdlog-dev (the same versions upstream pins), so only Debian's packages are needed. Built
# once (about a minute on two cores) into ~/.cache/tessera/lazyfs-<short commit>/: `lazyfs`, and
# the `libpcache.so.0` it loads from beside itself.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
commit=$(tr -d '[:space:]' < COMMIT)
target="${XDG_CACHE_HOME:-$HOME/.cache}/tessera/lazyfs-${commit:0:7}/lazyfs"
if [ ! -x "$target" ]; then
  # fuse3 brings fusermount3, which mounting and unmounting need.
  packages=(libfuse3-dev libtoml11-dev libspdlog-dev fuse3 cmake g++)
  missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} with apt-get" >&2
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    export DEBIAN_FRONTEND=noninteractive
    apt_log=$(mktemp)
    # The package lists are refreshed only if the install fails without.
    if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$apt_log" 2>&1; then
      { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1 \
        || { cat "$apt_log" >&2; echo "infra/lazyfs/build.sh: could not install ${missing[*]}" >&2; rm -f "$apt_log"; exit 1; }
    fi
    rm -f "$apt_log"
  fi
  echo "building LazyFS ${commit:0:7} (about a minute, once)" >&2
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  # Upstream's lazyfs/CMakeLists.txt links ../libs/libpcache/build/libpcache.so: the same layout, in a copy.
  cp -r vendor "$scratch/src"
  # -O2 (upstream's build.sh sets no build type, so no optimisation) but not -DNDEBUG: its asserts stay.
  cmake -S "$scratch/src/libs/libpcache" -B "$scratch/src/libs/libpcache/build" -Wno-dev \
    -DCMAKE_CXX_FLAGS=-O2 \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DFETCHCONTENT_SOURCE_DIR_TOML="$here/debian-deps/toml" \
    -DFETCHCONTENT_SOURCE_DIR_SPDLOG="$here/debian-deps/spdlog" >&2
  cmake --build "$scratch/src/libs/libpcache/build" -j2 >&2
  # lazyfs's own sources include spdlog without linking it: compile them against Debian's shared
  # spdlog too (one logger registry with libpcache's), and load libpcache.so.0 from beside the binary.
  cmake -S "$scratch/src/lazyfs" -B "$scratch/src/lazyfs/build" -Wno-dev \
    -DLAZYFS_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-O2 -DSPDLOG_COMPILED_LIB -DSPDLOG_SHARED_LIB -DSPDLOG_FMT_EXTERNAL" \
    -DCMAKE_CXX_STANDARD_LIBRARIES="-lspdlog -lfmt" \
    -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' >&2
  cmake --build "$scratch/src/lazyfs/build" -j2 >&2
  # Built into a scratch folder and moved into place whole, so a broken build is never cached.
  mkdir "$scratch/out"
  cp "$scratch/src/lazyfs/build/lazyfs" "$scratch/out/lazyfs"
  cp -L "$scratch/src/libs/libpcache/build/libpcache.so.0" "$scratch/out/libpcache.so.0"
  if ldd "$scratch/out/lazyfs" | grep -q 'not found'; then
    ldd "$scratch/out/lazyfs" >&2
    echo "infra/lazyfs/build.sh: the built lazyfs misses a shared library" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$(dirname "$target")")"
  rm -rf "$(dirname "$target")"
  mv "$scratch/out" "$(dirname "$target")"
fi
echo "$target"
