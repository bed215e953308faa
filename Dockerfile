FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
# The runtime only (no test tools, no PyTorch): a complete lock, so --no-deps (requirements.txt).
RUN pip install --no-cache-dir --no-deps -r requirements.txt
COPY . .
RUN DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput
RUN useradd --system registry && mkdir -p /app/var/embedding && chown registry /app/var/embedding
USER registry
EXPOSE 8000
# HTTP in Rust (granian), Django's WSGI application on 4 threads per worker, each request read in
# full before a thread runs it (registry/rsgi.py; measured in docs/benchmarks.md, "Serving").
CMD ["granian", "--interface", "rsgi", "--host", "0.0.0.0", "--port", "8000", "--workers", "2", \
     "--no-ws", "--respawn-failed-workers", "registry.rsgi:application"]
