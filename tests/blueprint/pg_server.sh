# An ephemeral PostgreSQL for the store tests, sourced by check_stores.sh and
# check_handoff_kill.sh: Debian's server binaries, a cluster initialised in
# a scratch directory, listening on 127.0.0.1 only (a free port) and stopped
# by its data directory's postmaster PID.
#
#   . pg_server.sh
#   pg_start DIR        # sets PG_PORT and PG_URL_BASE (postgresql://postgres@127.0.0.1:PORT);
#                       #   fails (message, return 1) when it cannot start
#   pg_createdb NAME    # a fresh database
#   pg_stop             # idempotent; call it from the EXIT trap
PG_DIR=""
PG_PORT=""
PG_URL_BASE=""

pg_start() {
  local dir=$1
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ ! -x "$PGBIN/initdb" ]; then
    echo "PostgreSQL server binaries not found (apt-get install postgresql)"
    return 1
  fi
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir/pg" && chown postgres:postgres "$dir/pg"
  chmod 755 "$dir"
  if ! runuser -u postgres -- "$PGBIN/initdb" -D "$dir/pg/data" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 \
      > "$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log"
    echo "initdb failed"
    return 1
  fi
  if ! runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/pg.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $dir/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start > /dev/null; then
    cat "$dir/pg/pg.log"
    echo "postgres did not start"
    return 1
  fi
  PG_DIR=$dir
  PG_URL_BASE="postgresql://postgres@127.0.0.1:$PG_PORT"
}

pg_createdb() {
  psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE \"$1\"" postgres
}

pg_stop() {
  [ -n "$PG_DIR" ] || return 0
  local pid
  pid=$(head -1 "$PG_DIR/pg/data/postmaster.pid" 2>/dev/null || true)
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PG_DIR/pg/data" -m fast -w stop > /dev/null 2>&1 || true
  # pg_ctl stop signals that PID; if it could not, end the postmaster by its PID.
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  PG_DIR=""
}
