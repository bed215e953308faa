#!/usr/bin/env bash
# Make sure Prometheus's promtool is installed (Debian's package `prometheus`), for the alert
# rules' tests (tests/metrics/test_alert_rules.py; scripts/apt_tools.sh: quiet when there, never
# fails the caller, the tests skip without it). The package's server is not started.
exec bash "$(dirname "$0")/apt_tools.sh" promtool "the alert rules' tests are" promtool prometheus
