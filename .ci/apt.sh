# Sourced by the .ci/*-setup.sh scripts: apt_install <tag> <package>... installs Debian packages
# as root, through sudo when not root, and fails with "<tag>: ..." when neither is possible.
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
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "$@"
}
