"""a2a-registry: the command line for publishers of an A2A agent-card registry.

It talks to the registry's HTTP API only (``/api/v1/...``) and imports nothing of the registry.
"""

__version__ = "0.1.0"
