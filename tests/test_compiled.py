"""registry.compiled.OneRow: the same instance the ORM gives, from SQL compiled once per thread."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cards.models import Agent, CrawlAttempt
from registry.compiled import OneRow, Rows, UUIDArray, among, uuid_array

pytestmark = pytest.mark.django_db(transaction=True)

STARTED_AT = CrawlAttempt._meta.get_field("started_at")


def _build(pk: Any, since: Any) -> Any:
    return (
        Agent.objects.filter(pk=pk)
        .only("id", "url", "signature", "last_crawled_at")
        .annotate(recent=Count("attempts", filter=Q(attempts__started_at__gte=since)))
    )


def test_one_row_gives_what_the_orm_gives() -> None:
    now = timezone.now()
    agent = Agent.objects.create(
        url="https://a.example/card.json", signature={"signatures": [{"kid": "k"}]}
    )
    Agent.objects.filter(pk=agent.pk).update(last_crawled_at=now)
    for days in (1, 2, 9):
        CrawlAttempt.objects.create(
            agent=agent, started_at=now - timedelta(days=days), duration_ms=1, outcome="x",
            success=True,
        )  # fmt: skip
    read = OneRow(_build, pk=Agent._meta.pk, since=STARTED_AT)
    since = now - timedelta(days=7)

    got = read.get(pk=agent.pk, since=since)
    expected = _build(agent.pk, since).get()
    assert got is not None
    assert got.get_deferred_fields() == expected.get_deferred_fields()
    for name in ("id", "url", "signature", "last_crawled_at", "recent"):
        assert getattr(got, name) == getattr(expected, name), name
    assert got.recent == 2 and got.signature == {"signatures": [{"kid": "k"}]}
    assert got._state.adding is False and got._state.db == "default"

    # Other values, the same SQL: one statement each, and a string id works as the ORM's does.
    with CaptureQueriesContext(connection) as queries:
        again = read.get(pk=str(agent.pk), since=now - timedelta(days=30))
        assert read.get(pk=uuid.uuid4(), since=since) is None
    assert again is not None and again.recent == 3
    assert len(queries.captured_queries) == 2
    assert queries.captured_queries[0]["sql"].count("LIMIT 1") == 1


def test_each_thread_compiles_its_own_and_gets_the_same_row() -> None:
    agent = Agent.objects.create(url="https://b.example/card.json")
    read = OneRow(_build, pk=Agent._meta.pk, since=STARTED_AT)
    found: list[Any] = []

    def in_thread() -> None:
        try:
            found.append(read.get(pk=agent.pk, since=timezone.now()))
        finally:
            connection.close()

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    mine = read.get(pk=agent.pk, since=timezone.now())
    assert found and found[0] is not None and mine is not None
    assert found[0].url == mine.url == "https://b.example/card.json"


def test_a_parameter_the_query_does_not_use_is_an_error() -> None:
    read = OneRow(
        lambda pk, since: Agent.objects.filter(pk=pk), pk=Agent._meta.pk, since=STARTED_AT
    )
    with pytest.raises(ValueError, match="since"):
        read.get(pk=uuid.uuid4(), since=timezone.now())


def test_rows_by_an_id_array_give_what_the_orm_gives() -> None:
    """A page's agents by their ids (one array parameter): the same instances as the ORM's
    ``pk__in`` read, whatever the number of ids, and nothing for ids no row has."""
    agents = [
        Agent.objects.create(
            url=f"https://r{i}.example/card.json", name=f"Rows {i}", tags=["x", str(i)]
        )
        for i in range(4)
    ]
    columns = ("id", "name", "tags", "updated_at")
    read = Rows(lambda ids: among(Agent.objects.only(*columns), ids).order_by(), ids=UUIDArray())
    for wanted in ([agents[0].pk], [a.pk for a in agents[1:]], [uuid.uuid4(), agents[2].pk], []):
        got = {row.pk: row for row in read.all(ids=wanted)}
        expected = {row.pk: row for row in Agent.objects.filter(pk__in=wanted).only(*columns)}
        assert set(got) == set(expected)
        for pk, row in got.items():
            assert row.get_deferred_fields() == expected[pk].get_deferred_fields()
            assert [getattr(row, c) for c in columns] == [getattr(expected[pk], c) for c in columns]
    assert uuid_array([agents[0].pk]) == "{" + agents[0].pk.hex + "}"
