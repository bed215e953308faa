"""Logs a machine can read (issue 38): which request, task and agent each line is about.

``context`` holds what is known (contextvars) and the filter that writes it onto every record;
``formats`` the two formats (text for people, one JSON object a line for a log pipeline);
``middleware`` takes or makes each web request's id; ``task_signals`` carries that id from the
request into the Celery tasks it queues (docs/operations.md, "Logs").
"""
