"""The commands, one module each: validate, login, verify-origin, publish, check."""
