"""A failure drill's real scrapes, made into a promtool unit test of deploy/prometheus/alerts.yml.

A drill scrapes the live processes every :data:`STEP` seconds (slot ``k`` at ``started + k *
STEP``) and keeps what each scrape answered. :func:`promtool_group` writes them as promtool's input
series, as Prometheus would have stored them: the scraped samples with the ``job`` and
``instance`` labels Prometheus adds, ``up`` (1 when the scrape answered, 0 when it did not),
``stale`` where a series left a scrape (Prometheus' staleness marker), ``_`` for a slot with no
scrape. Only the series the rules read are kept.

Two adjustments, both stated in the generated file:

* promtool's clock starts at 0: a gauge whose value is a Unix time (``*_timestamp_seconds``) is
  shifted by the drill's start, so ``time() - value`` means what it meant during the drill;
* a drill lasts seconds, the rules wait minutes (``for: 1m``, ``[5m]`` windows, beat silent for
  300 s): the series are extended to the evaluation time by repeating the values of the last
  scrape (an outage that lasts as the drill left it). No value is made up: every value in the
  file is one a scrape answered.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.metrics.scraping import Samples

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
STEP = 2  # seconds between two scrapes of a drill: the input series' interval
EVALUATION = 10  # seconds between two evaluations of the rules in promtool
_NAME = re.compile(r"\b((?:registry|django|process)_[a-z0-9_]+)\b")

Key = tuple[str, frozenset[tuple[str, str]]]


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def rule_series_names() -> set[str]:
    """Every series name the rules read, and ``up``."""
    return {name for rule in rules() for name in _NAME.findall(rule["expr"])} | {"up"}


@dataclass
class Target:
    """One scraped process, as Prometheus' scrape configuration names it."""

    job: str
    instance: str


@dataclass
class Timeline:
    """One drill's scrapes, by slot, then by target instance (None: the scrape failed)."""

    name: str
    started: float
    targets: list[Target]
    scrapes: dict[int, dict[str, Samples | None]] = field(default_factory=dict)

    def slot_now(self, now: float) -> int:
        """The next slot to scrape in: the current one while it began at most 0.25 s ago."""
        return max(0, math.ceil((now - self.started - 0.25) / STEP))

    def record(self, slot: int, instance: str, samples: Samples | None) -> None:
        self.scrapes.setdefault(slot, {})[instance] = samples

    @property
    def last_slot(self) -> int:
        return max(self.scrapes)

    def last(self, instance: str) -> Samples | None:
        return self.scrapes[self.last_slot].get(instance)

    def when(self, slot: int) -> float:
        """Seconds from the drill's start (promtool's clock) of ``slot``."""
        return float(slot * STEP)


def dump(timelines: list[Timeline]) -> str:
    """The timelines as JSON (kept beside the generated test, to read after a failure)."""
    return json.dumps(
        [
            {
                "name": t.name,
                "started": t.started,
                "targets": [[target.job, target.instance] for target in t.targets],
                "scrapes": {
                    str(slot): {
                        instance: None
                        if samples is None
                        else [[name, sorted(labels), v] for (name, labels), v in samples.items()]
                        for instance, samples in scraped.items()
                    }
                    for slot, scraped in t.scrapes.items()
                },
            }
            for t in timelines
        ]
    )


def load(text: str) -> list[Timeline]:
    out = []
    for item in json.loads(text):
        timeline = Timeline(item["name"], item["started"], [Target(*t) for t in item["targets"]])
        for slot, scraped in item["scrapes"].items():
            for instance, samples in scraped.items():
                timeline.record(
                    int(slot),
                    instance,
                    None
                    if samples is None
                    else {
                        (name, frozenset(tuple(pair) for pair in labels)): v
                        for name, labels, v in samples
                    },
                )
        out.append(timeline)
    return out


def _shifted(name: str, value: float, started: float) -> float:
    return value - started if name.endswith("_timestamp_seconds") else value


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _runs(values: list[str]) -> str:
    """promtool's expanding notation: ``vxN`` is N+1 values, ``_xN`` N missing ones."""
    out: list[str] = []
    at = 0
    while at < len(values):
        end = at
        while end + 1 < len(values) and values[end + 1] == values[at]:
            end += 1
        count = end - at + 1
        token = values[at]
        if count == 1 or token == "stale":
            out.extend([token] * count)
        elif token == "_":
            out.append(f"_x{count}")
        else:
            out.append(f"{token}x{count - 1}")
        at = end + 1
    return " ".join(out)


def input_series(timeline: Timeline, until_slot: int) -> list[dict[str, str]]:
    """The timeline's series the rules read, extended to ``until_slot`` with the last scrape's
    values (see the module's docstring)."""
    names = rule_series_names()
    by_key: dict[Key, dict[int, float]] = {}
    answered: dict[int, set[Key]] = {}
    for slot, scraped in timeline.scrapes.items():
        for target in timeline.targets:
            if target.instance not in scraped:
                continue
            samples = scraped[target.instance]
            extra = {("job", target.job), ("instance", target.instance)}
            up: Key = ("up", frozenset(extra))
            by_key.setdefault(up, {})[slot] = 1.0 if samples is not None else 0.0
            answered.setdefault(slot, set()).add(up)
            for (name, labels), value in (samples or {}).items():
                if name not in names:
                    continue
                key = (name, frozenset(labels | extra))
                by_key.setdefault(key, {})[slot] = _shifted(name, value, timeline.started)
                answered[slot].add(key)
    last = timeline.last_slot
    out: list[dict[str, str]] = []
    for key in sorted(by_key, key=lambda k: (k[0], sorted(k[1]))):
        values: list[str] = []
        present = False
        for slot in range(last + 1):
            if slot not in timeline.scrapes:
                values.append("_")  # no scrape in this slot (the one before ran late)
            elif slot in by_key[key]:
                values.append(_number(by_key[key][slot]))
                present = True
            else:
                # Scraped, and this series was not in the answer: Prometheus marks it stale.
                values.append("stale" if present else "_")
                present = False
        # The extension: the last scrape again until the evaluation (its absent series stay so).
        tail = values[-1] if values[-1] != "stale" else "_"
        values.extend([tail] * (until_slot - last))
        name, labels = key
        selector = ",".join(f'{label}="{value}"' for label, value in sorted(labels))
        out.append({"series": f"{name}{{{selector}}}", "values": _runs(values)})
    return out


def humanize_duration(seconds: float) -> str:
    """Prometheus' ``humanizeDuration`` template function, for seconds of a minute or more."""
    assert seconds >= 60, seconds
    whole = int(seconds)
    days, hours = whole // 86400, whole // 3600 % 24
    minutes, secs = whole // 60 % 60, whole % 60
    if days:
        return f"{days}d {hours}h {minutes}m {secs}s"
    if hours:
        return f"{hours}h {minutes}m {secs}s"
    return f"{minutes}m {secs}s"


def annotations(alert: str, instance: str | None, value: float) -> dict[str, str]:
    """The rule's annotations as Prometheus renders them for one alert (the three template
    forms the outage rules use; anything else fails here rather than be guessed)."""
    rule = next(rule for rule in rules() if rule.get("alert") == alert)
    rendered: dict[str, str] = {}
    for name, template in rule.get("annotations", {}).items():
        text = template.replace("{{ $labels.instance }}", instance or "")
        if "{{ $value | humanizeDuration }}" in text:
            text = text.replace("{{ $value | humanizeDuration }}", humanize_duration(value))
        text = text.replace("{{ $value }}", _number(value))
        assert "{{" not in text, f"{alert}: template not rendered here: {template}"
        rendered[name] = text
    return rendered


@dataclass
class Expected:
    """An alert a drill must fire at its evaluation time: name, instance (None for a rule that
    aggregates instances away), job (the rules on ``up`` keep it) and the rule's value then."""

    alert: str
    instance: str | None = None
    job: str | None = None
    value: float = 0.0


def promtool_group(
    timeline: Timeline, eval_time: int, expected: list[Expected], watched: list[str]
) -> dict[str, Any]:
    """One promtool test group: the timeline's series, each expected alert firing with its
    labels and annotations at ``eval_time`` (seconds), and, of the ``watched`` alerts, exactly
    the expected ones firing (by name and instance)."""
    until = math.ceil(eval_time / STEP) + 1
    by_name: dict[str, list[dict[str, Any]]] = {}
    for alert in expected:
        rule = next(rule for rule in rules() if rule.get("alert") == alert.alert)
        labels = {**rule.get("labels", {})}
        if alert.instance is not None:
            labels["instance"] = alert.instance
        if alert.job is not None:
            labels["job"] = alert.job
        by_name.setdefault(alert.alert, []).append(
            {
                "exp_labels": labels,
                "exp_annotations": annotations(alert.alert, alert.instance, alert.value),
            }
        )
    tests = [
        {"eval_time": f"{eval_time}s", "alertname": name, "exp_alerts": alerts}
        for name, alerts in by_name.items()
    ]
    firing = [
        {
            "labels": "{"
            + ", ".join(
                [f'alertname="{a.alert}"']
                + ([f'instance="{a.instance}"'] if a.instance is not None else [])
            )
            + "}",
            "value": 1,
        }
        for a in expected
    ]
    return {
        "interval": f"{STEP}s",
        "name": timeline.name,
        "input_series": input_series(timeline, until),
        "alert_rule_test": tests,
        "promql_expr_test": [
            {
                "expr": 'count by (alertname, instance) (ALERTS{alertstate="firing", '
                f'alertname=~"{"|".join(watched)}"}})',
                "eval_time": f"{eval_time}s",
                "exp_samples": firing,
            }
        ],
    }


HEADER = """\
# Generated by tests/faults/test_drills.py from the failure drills' real scrapes of /metrics
# (tests/faults/drill_series.py). Each group is one drill: the series every process answered,
# one scrape every {step} s from the drill's start (promtool's time 0). Unix-time gauges
# (*_timestamp_seconds) are shifted by the drill's start so that time() means the same. A drill
# lasts seconds and the rules wait minutes: each series is extended to the evaluation time by
# repeating the values of the drill's last scrape (the outage as the drill left it).
"""


def promtool_file(groups: list[dict[str, Any]]) -> str:
    body = {"rule_files": [str(RULES)], "evaluation_interval": f"{EVALUATION}s", "tests": groups}
    return HEADER.format(step=STEP) + yaml.safe_dump(body, sort_keys=False, width=1000)


def first_evaluation_at_or_after(seconds: float) -> int:
    return int(math.ceil(seconds / EVALUATION) * EVALUATION)
