#!/usr/bin/env bash
# Installs the Debian PostgreSQL server package if its binaries are missing, so the storage
# tests can start their own throwaway server (test/support/postgres.ts looks for
# /usr/lib/postgresql/*/bin/initdb). Idempotent: does nothing when a server is installed.
# The package's own cluster is not needed (and not started: containers usually forbid it).
set -euo pipefail

have_server() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' > /dev/null
}

if have_server; then
  echo "pg-setup: PostgreSQL server already installed: $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
  exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
apt_install pg-setup postgresql

if ! have_server; then
  echo "pg-setup: postgresql installed but no /usr/lib/postgresql/*/bin/initdb found" >&2
  exit 1
fi
# The tests run the server as the 'postgres' OS user when they run as root.
if ! id postgres > /dev/null 2>&1; then
  echo "pg-setup: the postgres OS user is missing" >&2
  exit 1
fi
echo "pg-setup: installed $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
