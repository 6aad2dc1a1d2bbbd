#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests.
#
#   scripts/test/postgres.sh start [DIR] [PORT]   initdb (once), start, create cairnq_test,
#                                            print the DSN on stdout (logs go to stderr)
#   scripts/test/postgres.sh stop  [DIR]          stop the cluster
#
# DIR defaults to .pg/ in the repository (gitignored), PORT to $CAIRNQ_PG_PORT
# or else 54329 (set it where another cluster holds that port). Host
# connections need the password (scram-sha-256), so authentication is real,
# and the server offers TLS with a self-signed certificate, so the default
# sslmode (prefer) connects encrypted. Durability is switched off (the data is
# disposable) unless CAIRNQ_PG_DURABLE=1, which keeps the server defaults —
# what the benchmarks measure against.
set -euo pipefail

command=${1:-start}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data=${2:-}
port=${3:-${CAIRNQ_PG_PORT:-54329}}
password=postgres
database=cairnq_test

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

bin=$(find_bin)
if [[ -z "$bin" && "$command" == start && $(id -u) -eq 0 ]]; then
    log "installing PostgreSQL (Debian packages)"
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
    bin=$(find_bin)
fi
if [[ -z "$bin" ]]; then
    log "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
    exit 1
fi

# The server refuses to run as root: run its tools as the postgres OS user.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# The server runs as the postgres OS user, which cannot enter a checkout under
# a private home (e.g. /root): the default then moves to /tmp.
if [[ -z "$data" ]]; then
    data=$root/.pg
    if [[ $(id -u) -eq 0 ]] && ! runuser -u postgres -- test -x "$root"; then
        data=/tmp/cairnq-pg-$port
        log "the postgres user cannot reach $root; using $data"
    fi
fi

case "$command" in
start)
    mkdir -p "$data"
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres: "$data"
    fi
    chmod 700 "$data"
    if [[ ! -f "$data/PG_VERSION" ]]; then
        pwfile=$(mktemp)
        trap 'rm -f "$pwfile"' EXIT
        echo "$password" >"$pwfile"
        chmod 644 "$pwfile"
        as_owner "$bin/initdb" -D "$data" -U postgres --pwfile="$pwfile" \
            --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >&2
        rm -f "$pwfile"
    fi
    if [[ ! -f "$data/server.crt" ]]; then
        # A self-signed certificate: clients that verify it must fail, the
        # others must still encrypt.
        as_owner openssl req -new -x509 -days 3650 -nodes -subj "/CN=cairnq-test" \
            -keyout "$data/server.key" -out "$data/server.crt" 2>/dev/null
        as_owner chmod 600 "$data/server.key"
    fi
    settings="-p $port -c unix_socket_directories= -c listen_addresses=127.0.0.1 -c max_connections=300 -c ssl=on"
    if [[ "${CAIRNQ_PG_DURABLE:-0}" != 1 ]]; then
        settings="$settings -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    if as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        log "already running in $data"
    else
        as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
            -o "$settings" \
            start >&2
    fi
    # Over TCP: a unix socket path inside a deep checkout could exceed the OS limit.
    export PGPASSWORD=$password
    exists=$("$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atc \
        "select 1 from pg_database where datname = '$database'")
    if [[ "$exists" != 1 ]]; then
        "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc \
            "create database $database" >&2
    fi
    echo "postgres://postgres:$password@127.0.0.1:$port/$database"
    ;;
stop)
    if [[ -f "$data/PG_VERSION" ]] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -w -m fast stop >&2
    else
        log "not running in $data"
    fi
    ;;
*)
    log "usage: $0 start|stop [DIR] [PORT]"
    exit 2
    ;;
esac
