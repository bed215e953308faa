from __future__ import annotations

from django.apps import AppConfig


class SchemasConfig(AppConfig):
    name = "schemas_app"
    verbose_name = "Embedded JSON Schemas"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from schemas_app import hooks  # lazy: it imports models, loaded only now

        hooks.register()
