#!/usr/bin/env bash
# Installs what Belay's local stack needs from Debian when it is missing:
# Java 17 (DynamoDB Local) and Chromium (the local Anchor-compatible browser service).
set -euo pipefail

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
[ -x /usr/lib/chromium/chromium ] || need+=(chromium)

if [ ${#need[@]} -eq 0 ]; then
  echo "system dependencies: present (java, chromium)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "system dependencies: installing ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
