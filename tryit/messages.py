"""The request a "Try it" form makes, as the agent's interface wants it, and the snippets that
send it. The data goes at ``DATA_PATH`` of the body; the page's script puts each edit there and
the snippets' ``BODY`` placeholder is the body as indented JSON, so server and script render
the same text."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from live import wire
from live.interfaces import HTTP_JSON, Interface

PLACEHOLDER = "__TRYIT_BODY__"
REQUEST_ID = "try-it-1"


def data_path(interface: Interface) -> list[str | int]:
    """Where the payload sits in the request body."""
    message: list[str | int] = ["message", "parts", 0, "data"]
    return message if interface.binding == HTTP_JSON else ["params", *message]


def sdk_path() -> list[str | int]:
    return ["parts", 0, "data"]


def message(interface: Interface, payload: Any, media_type: str) -> dict[str, Any]:
    """The user's message (wire.data_message without the registry's own check metadata: this
    is the message a developer sends, not one of the registry's checks)."""
    built = wire.data_message(interface, payload, media_type, "TRY-IT", "")
    built.pop("metadata", None)
    return built


def body(interface: Interface, payload: Any, media_type: str) -> dict[str, Any]:
    params = wire.send_params(interface, message(interface, payload, media_type))
    if interface.binding == HTTP_JSON:
        return params
    return {
        "jsonrpc": "2.0",
        "id": REQUEST_ID,
        "method": wire.method(interface, "send"),
        "params": params,
    }


def target(interface: Interface) -> str:
    return (
        wire.rest_url(interface, "message:send")
        if interface.binding == HTTP_JSON
        else interface.url
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def curl_template(interface: Interface) -> str:
    """curl with the body on standard input (a quoted here-document: no shell expansion)."""
    headers = ["-H 'Content-Type: application/json'"]
    headers += [f"-H {_quoted(f'{k}: {v}')}" for k, v in wire.version_headers(interface).items()]
    return (
        f"curl -sS -X POST {_quoted(target(interface))} \\\n  "
        + " \\\n  ".join(headers)
        + f" \\\n  --data-binary @- <<'EOF'\n{PLACEHOLDER}\nEOF"
    )


def python_template(card_url: str) -> str:
    """a2a-sdk (1.x): the client reads the card, picks the transport and speaks the agent's
    version (v0.3 included); the message is given in the v1.0 form."""
    parts = urlsplit(card_url)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path or "/.well-known/agent-card.json"
    return (
        "import asyncio\nimport json\n\n"
        "from a2a.client import create_client\n"
        "from a2a.types import SendMessageRequest\n"
        "from google.protobuf.json_format import ParseDict\n\n"
        f'MESSAGE = json.loads(r"""\n{PLACEHOLDER}\n""")\n\n\n'
        "async def main() -> None:\n"
        f"    client = await create_client(\n"
        f"        {json.dumps(base)}, relative_card_path={json.dumps(path)}\n"
        "    )\n"
        '    request = ParseDict({"message": MESSAGE}, SendMessageRequest())\n'
        "    async for response in client.send_message(request):\n"
        "        print(response)\n\n\n"
        "asyncio.run(main())\n"
    )


def fill(template: str, document: Any) -> str:
    return template.replace(PLACEHOLDER, json.dumps(document, indent=2, ensure_ascii=False))
