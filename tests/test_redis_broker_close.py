"""A worker that loses Redis with a message unacknowledged keeps running
(registry/redis_broker_close.py). kombu's own objects on a real Redis: a message delivered and
not acknowledged, the connection's transport detached as Celery's ``collect`` leaves it when
the channel's first close failed, then the close Celery's consumer makes. Before, that close
raised ``AttributeError`` past the cleanup and the worker exited ("Unrecoverable error")."""

from __future__ import annotations

import uuid

import pytest
from kombu import Connection
from kombu.common import ignore_errors

import registry.celery  # noqa: F401 - installs the fix, as every worker does
from tests.workers import redis_available, redis_url


def test_closing_a_collected_connection_with_a_message_unacknowledged_does_not_raise() -> None:
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}; `make test` starts it")
    queue = f"registry-test-close-{uuid.uuid4().hex[:8]}"
    connection = Connection(url)
    try:
        channel = connection.default_channel
        channel.queue_declare(queue)
        channel.basic_publish(channel.prepare_message("crawl"), exchange="", routing_key=queue)
        delivered = channel.basic_get(queue, no_ack=False)
        assert delivered is not None and channel.qos._delivered  # one unacknowledged
        connection._do_close_transport()  # what collect() leaves behind, the channel still open
        ignore_errors(connection, connection.close)  # Celery's consumer, after collect()
    finally:
        cleanup = Connection(url)
        with cleanup.channel() as fresh:
            fresh.queue_purge(queue)
            fresh.queue_delete(queue)
            fresh.client.delete(fresh.unacked_key, fresh.unacked_index_key)
        cleanup.release()
