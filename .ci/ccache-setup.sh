#!/usr/bin/env bash
# Installs Debian's ccache if it is missing. CI compiles better-sqlite3's addon three times: for
# Node.js 24 (npm ci), for 22 (npm rebuild) and for 24 again (the production install). Nearly all
# of each build (about 100 s on 2 cores) is SQLite's amalgamation, one C file that includes no
# Node.js header, so through ccache the second and third builds take seconds instead of minutes
# (.ci/run sets CC, CXX and the cache's settings). Idempotent. Optional: without ccache CI only
# takes longer, so a failed install is reported and not fatal.
set -uo pipefail

if command -v ccache > /dev/null; then
  echo "ccache-setup: $(ccache --version | head -1) already installed"
  exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
if apt_install ccache-setup ccache && command -v ccache > /dev/null; then
  echo "ccache-setup: installed $(ccache --version | head -1)"
else
  echo "ccache-setup: ccache could not be installed; native addons are compiled without it" >&2
fi
exit 0
