#!/usr/bin/env bash
# The tests use real parts from Debian's packages, never mocks or downloaded builds:
#   redis-server  the Redis event log and APQ store, and the multi-replica tests;
#   redis-sentinel  the Redis failover test (Debian packages it apart from redis-server);
#   chromium      the GraphiQL tests, driven by playwright-core (no downloaded browser);
#   haproxy       the load balancer of the two-replica topology test;
#   mitmproxy     the intercepting outbound forward proxy (mitmdump) of test/upstream/outbound-proxy.test.ts;
#   openssl       the test CA and server certificate behind that proxy;
#   curl, jq      the guides' runnable shell sessions (test/docs/runnable-blocks.test.ts).
# Installs whichever is missing, with one apt-get update for all of them.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v mitmdump >/dev/null 2>&1 || missing+=(mitmproxy)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
echo "not found: ${missing[*]}: installing with apt-get" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v redis-server >/dev/null && command -v redis-sentinel >/dev/null && [ -x /usr/bin/chromium ] &&
  [ -x /usr/sbin/haproxy ] && command -v mitmdump >/dev/null && command -v openssl >/dev/null &&
  command -v curl >/dev/null && command -v jq >/dev/null
