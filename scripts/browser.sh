#!/usr/bin/env bash
# Make sure Debian's headless Chromium and its WebDriver are installed, for tests/test_browser.py
# (scripts/apt_tools.sh: quiet when there, never fails the caller, the tests skip without them).
exec bash "$(dirname "$0")/apt_tools.sh" browser "the browser tests are" "chromium chromedriver" \
  chromium chromium-driver
