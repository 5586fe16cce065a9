#!/usr/bin/env bash
# The topology test runs a real HAProxy (Debian package) in front of two gateways. Install it where
# it is missing.
set -euo pipefail
if [ -x /usr/sbin/haproxy ]; then exit 0; fi
echo "haproxy not found: installing it with apt-get" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends haproxy >/dev/null
test -x /usr/sbin/haproxy
