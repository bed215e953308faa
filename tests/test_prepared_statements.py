"""The reads compiled once run as prepared statements, and survive what invalidates them.

registry.compiled runs its reads through ``connection.prepared_cursor()``
(registry/postgresql/base.py): PostgreSQL parses and plans each statement once per connection.
What the server holds is read from ``pg_prepared_statements`` on the same connection. A
migration that changes a returned column's type is played by another connection's ``ALTER
TABLE`` on a table of the test's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cards.reads import documents
from cards.reads.gate import ANONYMOUS
from registry.postgresql.base import PreparedCursor
from tests.factories import agent_from_card, minimal_card
from tests.support import other_connection

pytestmark = pytest.mark.django_db(transaction=True)

PROBE = "prepared_probe"


@pytest.fixture(autouse=True)
def _fresh_connection() -> Iterator[None]:
    """Each test starts and ends with a connection of its own (no statement left over)."""
    connection.close()
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {PROBE}")
    connection.close()


def _server_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _probe_value() -> object:
    with connection.prepared_cursor() as cursor:
        cursor.execute(f"SELECT x FROM {PROBE}")
        row = cursor.fetchone()
    return row[0] if row else None


def test_a_fetch_by_id_is_prepared_once_per_connection() -> None:
    agent = agent_from_card(minimal_card(name="Prepared"))
    ingest = _server_statements()  # the crawl's own compiled reads (its locked read)
    first = documents.detail(ANONYMOUS, agent.pk, base="http://testserver")
    statements = [s for s in _server_statements() if s not in ingest]
    assert len(statements) == 1 and '"cards_agent"."detail_doc"' in statements[0]
    assert "$1" in statements[0]  # values bound on the server, not written into the text

    with CaptureQueriesContext(connection) as queries:
        again = documents.detail(ANONYMOUS, agent.pk, base="http://testserver")
        missing = documents._detail_row(ANONYMOUS, uuid.uuid4())
    assert again == first and missing is None
    assert len(queries) == 2  # still logged and counted like any query
    assert sorted(_server_statements()) == sorted(ingest + statements)  # not prepared again
    assert connection.connection.prepare_threshold is None  # Django's cursors prepare nothing


def test_a_statement_whose_result_changed_type_is_prepared_again() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {PROBE} (x integer)")
        cursor.execute(f"INSERT INTO {PROBE} VALUES (1)")
    assert _probe_value() == 1
    assert any(PROBE in statement for statement in _server_statements())
    with other_connection() as other:  # a migration run by another process
        other.execute(f"ALTER TABLE {PROBE} ALTER COLUMN x TYPE bigint")
        other.execute(f"ALTER TABLE {PROBE} ALTER COLUMN x TYPE text")
    # PostgreSQL refuses the prepared statement ("cached plan must not change result type");
    # the connection's statements are dropped and the query runs again.
    assert _probe_value() == "1"
    assert _probe_value() == "1"


def test_a_statement_the_server_no_longer_has_is_prepared_again() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {PROBE} (x integer)")
        cursor.execute(f"INSERT INTO {PROBE} VALUES (1)")
    assert _probe_value() == 1
    with connection.cursor() as cursor:  # psycopg does not see this one: its cache is stale
        cursor.execute("DEALLOCATE ALL")
    assert _server_statements() == []
    assert _probe_value() == 1
    assert len(_server_statements()) == 1


def test_inside_a_transaction_a_stale_statement_is_an_error_not_a_retry() -> None:
    from django.db import NotSupportedError, transaction

    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {PROBE} (x integer)")
        cursor.execute(f"INSERT INTO {PROBE} VALUES (1)")
    assert _probe_value() == 1
    with other_connection() as other:
        other.execute(f"ALTER TABLE {PROBE} ALTER COLUMN x TYPE text")
    # The transaction is aborted by the failure: running again inside it cannot succeed.
    with pytest.raises(NotSupportedError), transaction.atomic():
        _probe_value()
    # The rollback made psycopg drop the connection's statements: a read that always runs in
    # a transaction (a crawl's locked read) is prepared again in the next one.
    with transaction.atomic():
        assert _probe_value() == "1"
    assert _probe_value() == "1"  # and outside one


def test_off_the_reads_use_djangos_own_cursor() -> None:
    connection.settings_dict["PREPARED"] = False
    try:
        agent = agent_from_card(minimal_card(name="Not prepared"))
        with connection.prepared_cursor() as cursor:
            assert not isinstance(cursor.cursor, PreparedCursor)
        documents.detail(ANONYMOUS, agent.pk, base="http://testserver")
        assert _server_statements() == []  # neither the crawl's reads nor the detail's
    finally:
        connection.settings_dict["PREPARED"] = True
