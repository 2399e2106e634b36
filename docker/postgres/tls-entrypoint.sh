#!/bin/sh
# The Postgres entrypoint of the stack's TLS mode (make TLS=1, docker-compose.tls.yml):
# copies the server's certificate and key from /certs (mounted read-only, owned by
# whoever made them) to where Postgres may use them (owned by postgres, the key
# mode 0600, as Postgres requires), writes a pg_hba.conf that admits TCP clients
# over TLS only (hostssl) and runs the image's own entrypoint with ssl=on.
set -eu
src=${PG_TLS_DIR:-/certs}
dst=/var/lib/postgresql/tls
mkdir -p "$dst"
install -o postgres -g postgres -m 0644 "$src/postgres.pem" "$dst/server.crt"
install -o postgres -g postgres -m 0600 "$src/postgres-key.pem" "$dst/server.key"
# The Unix socket stays as the image has it (trust), for the entrypoint's init
# scripts; every TCP connection needs TLS and a password.
cat >"$dst/pg_hba.conf" <<'HBA'
local   all          all        trust
hostssl all          all  all   scram-sha-256
hostssl replication  all  all   scram-sha-256
HBA
chown postgres:postgres "$dst/pg_hba.conf"
case "${1:-postgres}" in
postgres | -*)
	set -- "$@" -c ssl=on -c "ssl_cert_file=$dst/server.crt" -c "ssl_key_file=$dst/server.key" \
		-c "hba_file=$dst/pg_hba.conf"
	;;
esac
exec docker-entrypoint.sh "$@"
