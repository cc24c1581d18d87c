# Sourced by the .ci/*-setup.sh scripts: apt_install <tag> <package>... installs Debian packages
# as root, through sudo when not root, and fails with "<tag>: ..." when neither is possible.
# The package lists are updated once per run, not once per script (CI's three setup scripts each
# asked for it): `apt-get update` is skipped while the last one these scripts ran is less than an
# hour old (APT_UPDATED_STAMP marks it).
APT_UPDATED_STAMP=/tmp/a2a-registry-apt-updated

apt_install() {
  local tag=$1
  shift
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo > /dev/null; then sudo=(sudo); else
      echo "$tag: need root (or sudo) to install $*" >&2
      return 1
    fi
  fi
  if [ -z "$(find "$APT_UPDATED_STAMP" -mmin -60 2> /dev/null)" ]; then
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update
    touch "$APT_UPDATED_STAMP" 2> /dev/null || true
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "$@"
}
