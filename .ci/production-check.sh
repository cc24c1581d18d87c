#!/usr/bin/env bash
# The production path of the README: in a folder holding only what a deployment has (the package
# files and the built dist/, as `npm run build` left it), `npm ci --omit=dev` must install
# without TypeScript, then `npm start` must serve (the web page included) and the built CLI must register and search.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/src/main.js ] || { echo "production-check: run npm run build first" >&2; exit 1; }

dir=$PWD/.cache/production-check
rm -rf "$dir" && mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
cp -r package.json package-lock.json .npmrc bin schemas agent-card.json LICENSE "$dir/"
mkdir -p "$dir/dist" && cp -r dist/src dist/web "$dir/dist/"

(cd "$dir" && npm ci --omit=dev --no-audit --no-fund)
# (@types/node is not checked: protobufjs, under @grpc/grpc-js, lists it as a runtime dependency.)
for dev in typescript tsx esbuild autocannon playwright-core; do
  if [ -e "$dir/node_modules/$dev" ]; then echo "production-check: dev dependency $dev was installed" >&2; exit 1; fi
done
node .ci/smoke.mjs "$dir" examples/agent-card.json
