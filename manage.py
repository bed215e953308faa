#!/usr/bin/env python
"""Django's command-line utility for the registry."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    from registry import metrics_dir

    metrics_dir.for_command(sys.argv)  # a command is not a server: not in the node's metrics
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from registry.env import ConfigError

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings, which check the environment
    except (ImproperlyConfigured, ConfigError) as exc:
        # A configuration mistake is one line saying what to do, not a traceback.
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
