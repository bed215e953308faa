#!/usr/bin/env bash
# Make sure PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) answer; start them where this
# machine has them installed, and say plainly what to do where it has not.
set -u

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }

if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "services: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 0.5; done
  fi
fi
if ! pg_up; then
  echo "services: PostgreSQL is not reachable on 127.0.0.1:5432 and cannot be started here." >&2
  echo "  Install and start it (Debian: apt-get install postgresql), or run: docker compose up -d postgres" >&2
  exit 1
fi

if ! redis_up; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "services: starting Redis"
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
    for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
  fi
fi
if ! redis_up; then
  echo "services: Redis is not reachable on 127.0.0.1:6379 and cannot be started here." >&2
  echo "  Install and start it (Debian: apt-get install redis-server), or run: docker compose up -d redis" >&2
  exit 1
fi
echo "services: PostgreSQL and Redis are up"
