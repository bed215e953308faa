#!/usr/bin/env bash
# Make sure Prometheus's promtool is installed (Debian's package `prometheus`), for the alert
# rules' tests (tests/metrics/test_alert_rules.py). Idempotent and quiet: does nothing when it is
# there. Never fails the caller: where it cannot be installed it says so and exits 0, and the
# rules' tests skip with the same reason. The package's server is not started (nothing here
# runs it; in a container without an init system its service is not started either).
set -u

if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "promtool: apt-get is not available; install Prometheus's promtool by hand" \
    "(the alert rules' tests are skipped without it)."
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "promtool: not root and no password-less sudo; run: apt-get install prometheus" \
      "(the alert rules' tests are skipped without it)."
    exit 0
  fi
fi

install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    prometheus >/dev/null 2>&1
}

echo "promtool: installing Debian's prometheus package (for promtool)"
if ! install; then
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  install || true
fi

if command -v promtool >/dev/null 2>&1; then
  echo "promtool: $(promtool --version 2>&1 | head -n 1)"
else
  echo "promtool: it could not be installed; the alert rules' tests will be skipped."
fi
exit 0
