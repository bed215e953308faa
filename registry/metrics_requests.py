"""django-prometheus's request series with label values from closed sets only.

The stock ``PrometheusAfterMiddleware`` labels its latency histogram with the request's method
as the client spelled it (``request.method``, any token a client cares to send), while its
counters fold unknown methods into one value. Each new method name made a histogram of 19
series: 3,000 anonymous requests with random method names took a node from 6,310 series to
63,310, its metrics directory from 2.4 to 16.8 MB and a scrape from 0.22 to 4.8 s, even when
every one was answered 401 (issue 43, section 4).

Here every ``method`` label is one of :data:`METHODS` or ``other``. The other labels these
series carry are the registry's own choices, never a client's: ``view`` is the name of the URL
pattern that matched (a closed set, the URLconf's; ``<unnamed view>`` when none did, so random
paths add nothing), ``status`` the status code the registry answered, ``transport`` http or
https, ``templatename`` and ``charset`` what the view rendered, ``type`` an exception's class.
Series of the registry's own (registry/metrics.py) take their labels from code: an outcome, a
door, a check id, a limit's name. ``/mcp`` is not seen by this middleware at all, and its tool
names label nothing. Tests: tests/metrics/test_label_sets.py.

Every answer is counted by status, once. The after-middleware sits inside the others, so an
answer made by a middleware (the limiter's 429, a 500 from an exception raised in one, the
CSRF 403) never reaches it: the before-middleware, outermost, counts those it did not see, in
the same series, with ``view="<middleware>"``. Tests: tests/metrics/test_every_answer.py.

A request the registry makes to itself is not traffic: each web worker's warm-up request
(registry/serving.py ``warm_up``, before the worker serves) carries :data:`UNCOUNTED` in its
environ and leaves no trace in these series (nor an access line: registry/logs/access.py).
Counted, it made every start of a node look like traffic: one ``/healthz`` per worker.
Tests: tests/metrics/test_warm_up.py, and the failure drills (tests/faults/test_drills.py).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django_prometheus.middleware import (
    PrometheusAfterMiddleware as CountingAfterMiddleware,
)
from django_prometheus.middleware import (
    PrometheusBeforeMiddleware as CountingBeforeMiddleware,
)
from django_prometheus.utils import Time

from registry import metrics

# RFC 9110's methods and PATCH (RFC 5789): what the registry, a browser or a client library sends.
METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)
OTHER = "other"
MIDDLEWARE_VIEW = "<middleware>"  # the view label of an answer no view made
SERVER_ERRORS = ("500", "503")  # what the registry answers when it fails: made at 0
_COUNTED = "_registry_answer_counted"
# In the environ (request.META) of a request the registry makes to itself: not counted.
UNCOUNTED = "registry.uncounted"
# The labelled series a middleware keeps at hand (a bound: the label sets are closed anyway).
_CHILDREN_CACHED = 4096


def kept_child(
    children: dict[tuple[Any, ...], Any], key: tuple[Any, ...], metric: Any, labels: Any
) -> Any:
    """``metric``'s child for ``labels`` (a dict by name, or the values in order), looked up
    once and kept in ``children`` under ``key``: ``labels()`` checks the names, converts every
    value and takes the registry's lock on each call. The label values are from closed sets
    (the module's docstring); the cache stops growing at a bound all the same."""
    child = children.get(key)
    if child is None:
        child = metric.labels(**labels) if isinstance(labels, dict) else metric.labels(*labels)
        if len(children) < _CHILDREN_CACHED:
            children[key] = child
    return child


def counted(request: HttpRequest) -> bool:
    """Whether ``request`` is traffic (not one the registry made to itself)."""
    return not request.META.get(UNCOUNTED)


def method_label(method: str | None) -> str:
    """``method`` when it is one of :data:`METHODS`, else ``other``."""
    return method if method in METHODS else OTHER


class PrometheusAfterMiddleware(CountingAfterMiddleware):
    """django-prometheus's middleware (after all the others) with a closed set of methods."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._children: dict[tuple[Any, ...], Any] = {}

    def _method(self, request: HttpRequest) -> str:
        return method_label(request.method)

    def process_request(self, request: HttpRequest) -> Any:
        # The stock process_request, reading the two headers from the environ: request.headers
        # builds a dict of every header for two look-ups, and nothing else here needs it.
        if not counted(request):
            return None
        metrics, meta = self.metrics, request.META
        self.label_metric(metrics.requests_by_method, request, method=request.method).inc()
        transport = self._transport(request)
        self.label_metric(metrics.requests_by_transport, request, transport=transport).inc()
        if meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest":
            metrics.requests_ajax.inc()
        metrics.requests_body_bytes.observe(int(meta.get("CONTENT_LENGTH") or 0))
        request.prometheus_after_middleware_event = Time()  # type: ignore[attr-defined]
        return None

    def process_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        return super().process_view(request, *args, **kwargs) if counted(request) else None

    def process_template_response(self, request: HttpRequest, response: Any) -> Any:
        if not counted(request):
            return response
        return super().process_template_response(request, response)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        return super().process_exception(request, exception) if counted(request) else None

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        setattr(request, _COUNTED, True)
        if not counted(request):
            return response
        return super().process_response(request, response)

    def label_metric(
        self, metric: Any, request: HttpRequest, response: Any = None, **labels: Any
    ) -> Any:
        # process_response and process_exception pass request.method itself to the latency
        # histogram: every labelled series passes through here, so it is folded here.
        if not labels:
            return metric
        if "method" in labels:
            labels["method"] = method_label(labels["method"])
        return kept_child(self._children, (id(metric), *labels.items()), metric, labels)


class PrometheusBeforeMiddleware(CountingBeforeMiddleware):
    """django-prometheus's middleware (before all the others) that also counts, by status,
    the answers the after-middleware never saw (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Loaded once per serving process: its counters' closed label sets, at 0, and the
        # server errors' statuses (RegistryServerErrors' rate() sees the first outage's 500s).
        metrics.init_label_sets()
        for status in SERVER_ERRORS:
            self.metrics.responses_by_status.labels(status=status).inc(0)

    def process_request(self, request: HttpRequest) -> Any:
        return super().process_request(request) if counted(request) else None

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        if not counted(request):
            return response
        response = super().process_response(request, response)
        if not getattr(request, _COUNTED, False):
            setattr(request, _COUNTED, True)
            status = str(response.status_code)
            self.metrics.responses_by_status.labels(status=status).inc()
            self.metrics.responses_by_status_view_method.labels(
                status=status, view=MIDDLEWARE_VIEW, method=method_label(request.method)
            ).inc()
        return response


class AnswerSeries:
    """The request series of an answer made without the middleware (registry/hot_reads.py):
    every series the two middleware above write for a GET that passes them all and is answered
    by a view, with the same labels. ``seconds`` stands for both latencies (the time outside
    the view is the part the hot path saves)."""

    def __init__(self) -> None:
        self.metrics = CountingAfterMiddleware.metrics_cls.get_instance()
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *values: str) -> Any:
        return kept_child(self._children, (id(metric), *values), metric, values)

    def answered(
        self,
        *,
        view: str,
        transport: str,
        status: int,
        body_bytes: int,
        charset: str,
        seconds: float,
        method: str = "GET",
    ) -> None:
        m, child, code = self.metrics, self._child, str(status)
        m.requests_total.inc()
        child(m.requests_by_method, method).inc()
        child(m.requests_by_transport, transport).inc()
        m.requests_body_bytes.observe(0)
        child(m.requests_by_view_transport_method, view, transport, method).inc()
        child(m.responses_by_status, code).inc()
        child(m.responses_by_status_view_method, code, view, method).inc()
        child(m.responses_by_charset, charset).inc()
        m.responses_body_bytes.observe(body_bytes)
        child(m.requests_latency_by_view_method, view, method).observe(seconds)
        m.responses_total.inc()
        m.requests_latency_before.observe(seconds)
