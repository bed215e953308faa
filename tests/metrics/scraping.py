"""Reading /metrics as Prometheus does: the real text parser, samples looked up by labels."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample of an exposition, by (sample name, labels)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def scrape(client: Any, **extra: Any) -> Samples:
    """One scrape of ``/metrics`` through Django's test client (allowed: loopback by default)."""
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(response.content.decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; 0.0 when the series has not been written yet (a counter not yet
    incremented has no sample)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def with_name(samples: Samples, name: str) -> dict[frozenset[tuple[str, str]], float]:
    """Every sample of one name, by labels."""
    return {labels: v for (sample, labels), v in samples.items() if sample == name}
