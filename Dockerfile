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
CMD ["gunicorn", "-c", "gunicorn.conf.py", "registry.wsgi:application"]
