#!/usr/bin/env bash
# Install Debian packages a test suite needs, if the commands they bring are missing.
# Usage: apt_tools.sh LABEL WHAT_SKIPS "COMMAND..." PACKAGE...
#   LABEL: the prefix of each line; WHAT_SKIPS: which tests skip without them;
#   COMMAND...: the commands that must be on PATH (space-separated); PACKAGE...: what to install.
# Idempotent and quiet: does nothing when every command is there. Never fails the caller: where
# the packages cannot be installed it says so and exits 0, and the tests skip with the reason.
set -u

label=$1 skips=$2 commands=$3
shift 3
have() { for c in $commands; do command -v "$c" >/dev/null 2>&1 || return 1; done; }

if have; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$label: apt-get is not available; install $* by hand ($skips skipped without them)."
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "$label: not root and no password-less sudo; run: apt-get install $* ($skips skipped without them)."
    exit 0
  fi
fi

install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" \
    >/dev/null 2>&1
}

echo "$label: installing $* (Debian packages)"
if ! install "$@"; then
  # The package lists may be missing or stale on a fresh machine: refresh them once and retry.
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  install "$@" || true
fi

if have; then
  for c in $commands; do echo "$label: $("$c" --version 2>&1 | head -n 1)"; done
else
  echo "$label: $* could not be installed; $skips skipped."
fi
exit 0
