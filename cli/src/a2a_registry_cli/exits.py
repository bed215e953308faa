"""The exit codes every command shares, so that a CI job can gate on them."""

from __future__ import annotations

OK = 0
CARD_ERRORS = 1  # the card has error-level findings, its crawl failed, or a proof did not pass
LIVE_FAILED = 2  # the live checks ran and failed (or --require-live and none ran)
USAGE = 3  # usage, authentication, network or API errors: nothing was judged

DESCRIPTION = """\
Exit codes:
  0  valid (and the live checks passed, when they ran)
  1  the card has error-level findings, its crawl failed, or the origin was not verified
  2  the live checks ran and failed
  3  usage, authentication, network or registry errors"""
