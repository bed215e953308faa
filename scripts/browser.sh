#!/usr/bin/env bash
# Make sure Debian's headless Chromium and its WebDriver are installed, for tests/test_browser.py.
# Idempotent and quiet: does nothing when both are there. Never fails the caller: where they
# cannot be installed it says so and exits 0, and the browser test skips with the same reason.
set -u

have() { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }

if have; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser: apt-get is not available; install chromium and chromedriver by hand" \
    "(the browser test is skipped without them)."
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "browser: not root and no password-less sudo; run: apt-get install chromium chromium-driver" \
      "(the browser test is skipped without them)."
    exit 0
  fi
fi

install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver >/dev/null 2>&1
}

echo "browser: installing chromium and chromium-driver (Debian packages)"
if ! install; then
  # The package lists may be missing or stale on a fresh machine: refresh them once and retry.
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  install || true
fi

if have; then
  echo "browser: $(chromium --version 2>/dev/null | head -n 1); $(chromedriver --version 2>/dev/null | head -n 1)"
else
  echo "browser: chromium or chromedriver could not be installed; the browser test will be skipped."
fi
exit 0
