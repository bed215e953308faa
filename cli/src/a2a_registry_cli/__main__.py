"""``python -m a2a_registry_cli``: the same as the ``a2a-registry`` command."""

from a2a_registry_cli.main import run

run()
