#!/usr/bin/env bash
# Entry point of the locally built Postgres image: the subset of the official
# postgres image's docker-entrypoint.sh that this project relies on.
#
#   POSTGRES_PASSWORD          required unless POSTGRES_HOST_AUTH_METHOD=trust
#   POSTGRES_USER              superuser name (default postgres)
#   POSTGRES_DB                database created on first start (default $POSTGRES_USER)
#   POSTGRES_INITDB_ARGS       extra initdb arguments
#   POSTGRES_HOST_AUTH_METHOD  auth for remote hosts (default scram-sha-256)
#   PGDATA                     data directory (default /var/lib/postgresql/data)
#
# On first start (no PG_VERSION in PGDATA) it runs initdb, lets every host connect
# with a password (replication connections included), then runs
# /docker-entrypoint-initdb.d/*.sh, *.sql and *.sql.gz against POSTGRES_DB on a
# server that listens on the Unix socket only. Arguments are Postgres's own: `-c
# wal_level=logical` or `postgres -c wal_level=logical`. Started as root, it fixes
# ownership and re-executes itself as postgres; Postgres never runs as root.
set -Eeo pipefail

log() { printf '%s [entrypoint] %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# as_postgres re-runs this script as the postgres user (setpriv: util-linux,
# essential in Debian, so no gosu is needed).
as_postgres() {
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$@"
}

prepare_dirs() {
	mkdir -p "$PGDATA" /var/run/postgresql
	chmod 00700 "$PGDATA" || :
	chmod 03775 /var/run/postgresql || :
	if [ "$(id -u)" = 0 ]; then
		find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
		chown postgres:postgres /var/run/postgresql
	fi
}

init_db() {
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		die "POSTGRES_PASSWORD is empty: set it (or POSTGRES_HOST_AUTH_METHOD=trust, which lets anyone connect)"
	fi
	log "initializing $PGDATA"
	local args=(--username="$POSTGRES_USER" --encoding=UTF8 --locale=C.UTF-8
		--auth-local=trust --auth-host=scram-sha-256)
	# shellcheck disable=SC2206 # POSTGRES_INITDB_ARGS is a list of words by design.
	args+=($POSTGRES_INITDB_ARGS)
	if [ -n "${POSTGRES_PASSWORD:-}" ]; then
		# Through a pipe: the password is never in argv or a file.
		initdb "${args[@]}" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") >/dev/null
	else
		initdb "${args[@]}" >/dev/null
	fi
	# Every host, with a password; "all" does not cover physical replication.
	{
		echo
		echo "host all all all $POSTGRES_HOST_AUTH_METHOD"
		echo "host replication all all $POSTGRES_HOST_AUTH_METHOD"
	} >>"$PGDATA/pg_hba.conf"
	echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
}

run_init_scripts() {
	# The temporary server listens on the socket only, so no client sees a
	# half-initialized database.
	PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -p 5432" start
	local psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --no-password)
	if [ "$POSTGRES_DB" != postgres ]; then
		"${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<-'SQL'
			CREATE DATABASE :"db";
		SQL
	fi
	local f
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sh)
			log "running $f"
			# shellcheck disable=SC1090 # init scripts are the user's.
			. "$f"
			;;
		*.sql) log "running $f"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
		*.sql.gz) log "running $f"; gunzip -c "$f" | "${psql[@]}" --dbname "$POSTGRES_DB" ;;
		*) [ -e "$f" ] && log "ignoring $f" ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop
	log "init done"
}

main() {
	if [ "${1:0:1}" = - ]; then
		set -- postgres "$@"
	fi
	if [ "$1" != postgres ]; then
		exec "$@"
	fi
	: "${PGDATA:=/var/lib/postgresql/data}" "${POSTGRES_USER:=postgres}"
	: "${POSTGRES_DB:=$POSTGRES_USER}" "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
	: "${POSTGRES_INITDB_ARGS:=}"
	export PGDATA POSTGRES_USER POSTGRES_DB POSTGRES_HOST_AUTH_METHOD

	prepare_dirs
	if [ "$(id -u)" = 0 ]; then
		as_postgres "${BASH_SOURCE[0]}" "$@"
	fi
	if [ ! -s "$PGDATA/PG_VERSION" ]; then
		init_db
		run_init_scripts
	else
		log "database in $PGDATA exists: skipping initialization"
	fi
	unset POSTGRES_PASSWORD
	exec "$@"
}

main "$@"
