#!/bin/sh
# Installs the Debian packages tensorgl needs that are missing; does nothing when all are there.
# Usage: scripts/install-deps.sh PACKAGE...   (root, or sudo for a normal user)
set -eu
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "tensorgl: installing missing packages:$missing"
sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "tensorgl: need root or sudo to install:$missing" >&2; exit 1; }
    sudo=sudo
fi
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
