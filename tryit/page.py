"""The "Try it" section of an agent's catalogue page (registered in ``cards.hooks``)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django_jsonform.widgets import JSONFormWidget

from cards import moderation
from cards.models import Agent
from tryit.blocks import Block, blocks_of


def may_send(user: Any, agent: Agent) -> bool:
    """Owner or staff, and only where the owner opted in to messages (live checks)."""
    return bool(agent.probe_messages) and moderation.can_manage(user, agent)


def _form(block: Block) -> str:
    """The form library's own widget: a container and the hidden field its script fills."""
    if block.reason:
        return ""
    widget = JSONFormWidget(schema=block.schema)
    return widget.render(
        f"try-{block.slug}", json.dumps(block.payload), {"id": f"try-{block.slug}-data"}
    )


def section(request: HttpRequest, agent: Agent) -> dict[str, Any] | None:
    blocks = blocks_of(agent, list(agent.skills.all()))
    if not blocks:
        return None
    send = may_send(request.user, agent)
    validate_url = reverse("agent-validate-payload", args=[agent.pk])
    send_url = reverse("agent-try", args=[agent.pk]) if send else None
    return {
        "template": "tryit/_try_it.html",
        "scripts": True,
        "context": {
            "may_send": send,
            # The validator's calls need the CSRF token only with a session (DRF checks it for
            # session-authenticated requests); anonymous pages set no cookie.
            "signed_in": bool(getattr(request.user, "is_authenticated", False)),
            "opted_in": bool(agent.probe_messages),
            "manager": moderation.can_manage(request.user, agent),
            "blocks": [
                {
                    "block": block,
                    "form": _form(block),
                    "config": block.config(validate_url=validate_url, send_url=send_url),
                    "payload": json.dumps(block.payload, indent=2, ensure_ascii=False),
                    "schema": json.dumps(block.schema, indent=2, ensure_ascii=False),
                    "body": json.dumps(block.body, indent=2, ensure_ascii=False),
                }
                for block in blocks
            ],
        },
    }
