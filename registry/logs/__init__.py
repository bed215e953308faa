"""Logs a machine can read (issues 38 and 46): which request, task and agent each line is about.

``context`` holds what is known (contextvars) and the filter that writes it onto every record;
``formats`` the two formats (text for people, one JSON object a line for a log pipeline);
``middleware`` takes or makes each web request's id and writes its access line (``access``);
``task_signals`` carries that id from the request into the Celery tasks it queues
(``follow_ups``: into the agent's follow-ups beat queues too); ``task_lines`` writes each task's
received, succeeded, retried and failed lines; ``celery_output`` makes what Celery prints fit the
format; ``tracebacks`` keeps a repeated failure to one traceback a minute
(docs/operations.md, "Logs").
"""
