FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
# The CPU build of torch (only used once, to convert the embedding model to ONNX): PyPI's
# default build carries CUDA, several GB this image does not need.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput
RUN useradd --system registry && mkdir -p /app/var/embedding && chown registry /app/var/embedding
USER registry
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "registry.wsgi:application"]
