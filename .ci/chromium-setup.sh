#!/usr/bin/env bash
# Installs Debian's Chromium if /usr/bin/chromium is missing, for the web page's browser tests
# (test/web.test.ts drives it with playwright-core, which never downloads a browser of its own).
# Idempotent: does nothing when Chromium is installed. Under CI the browser tests fail rather
# than skip without it.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium-setup: $(/usr/bin/chromium --version 2>/dev/null || echo 'Chromium') already installed"
  exit 0
fi

# shellcheck source=.ci/apt.sh
source "$(dirname "$0")/apt.sh"
apt_install chromium-setup chromium fonts-liberation

if [ ! -x /usr/bin/chromium ]; then
  echo "chromium-setup: chromium installed but /usr/bin/chromium is missing" >&2
  exit 1
fi
echo "chromium-setup: installed $(/usr/bin/chromium --version 2>/dev/null || echo 'Chromium')"
