"""A TCP relay that lets the test process, in the machine's own namespace, talk to a host of the
private network as one client of it would.

Run on the client host (``ip netns exec <client> python relay.py ...``), it accepts on a
listening socket the test process made on its own loopback and handed down (``--fd``), and
opens each outgoing connection from inside the client's namespace, from ``--source``: the
registry sees that address as the client, exactly as it would see a person on another machine.
No link, address or route is added to the machine's namespace for this: only a socket.

Standalone on purpose (no Django, nothing from the project), so it starts in a blink.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.write_eof()


async def _serve(listener: socket.socket, host: str, port: int, source: str) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=(source, 0)), timeout=5
            )
        except (OSError, TimeoutError):
            client_w.close()  # the host is down: the client sees the connection closed
            return
        await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))
        for writer in (client_w, server_w):
            writer.close()

    server = await asyncio.start_server(handle, sock=listener)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fd", type=int, required=True, help="an inherited listening socket")
    parser.add_argument("--target", required=True, help="host:port to connect to")
    parser.add_argument("--source", required=True, help="the address to connect from")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    listener = socket.socket(fileno=args.fd)
    listener.setblocking(False)
    asyncio.run(_serve(listener, host, int(port), args.source))


if __name__ == "__main__":
    main()
