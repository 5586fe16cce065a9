#!/usr/bin/env bash
# The event-log tests run against a real redis-server (never a mock). Install it where it is missing.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
echo "redis-server not found: installing it with apt-get" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
command -v redis-server >/dev/null
