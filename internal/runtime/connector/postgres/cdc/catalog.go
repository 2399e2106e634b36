package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
)

// querier is a Postgres connection or pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// column is one published column of a table.
type column struct {
	name   string
	oid    uint32 // as pgoutput reports it (a domain's own OID)
	typmod int32
	codec  postgres.Codec
}

// table is what the feed knows about one source table.
type table struct {
	Table
	oid          uint32
	schema, name string // as in the catalog
	cols         []column
	key          []string // column names rows are matched by
	// fingerprint identifies the table and its published columns; a Relation
	// message that differs from it means the local table no longer fits.
	fingerprint string
}

func (t *table) ident() string { return pgx.Identifier{t.schema, t.name}.Sanitize() }

const relationSQL = `SELECT c.oid, n.nspname, c.relname, c.relkind::text, c.relreplident::text
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = $1::regclass`

// columnsSQL lists the columns pgoutput publishes (generated columns are not),
// with the base type of domains, which is what travels on the wire.
const columnsSQL = `SELECT a.attname, a.atttypid, a.atttypmod,
       CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END,
       CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END,
       coalesce(b.typtype, t.typtype) = 'e'
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`

// indexSQL lists the columns of the primary key ($2 = true) or of the replica
// identity index ($2 = false), in index order.
const indexSQL = `SELECT a.attname
FROM pg_index i
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = $1 AND CASE WHEN $2 THEN i.indisprimary ELSE i.indisreplident END
ORDER BY k.ord`

// describe reads a table's catalog entry and decides its key. Errors a user can fix
// say how.
func describe(ctx context.Context, q querier, t Table) (*table, error) {
	ti := &table{Table: t}
	var kind, ident string
	err := q.QueryRow(ctx, relationSQL, t.Table).Scan(&ti.oid, &ti.schema, &ti.name, &kind, &ident)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return nil, fmt.Errorf("dataset %s: table %s does not exist: check the dataset's from: (postgres:[schema.]table)", t.Dataset, t.Table)
		}
		if errors.As(err, &pgErr) && pgErr.Code == "28P01" {
			return nil, fmt.Errorf("dataset %s: describe table %s: %w; %s", t.Dataset, t.Table, err, postgres.PasswordAdvice)
		}
		return nil, fmt.Errorf("dataset %s: describe table %s: %w", t.Dataset, t.Table, err)
	}
	if kind != "r" && kind != "p" {
		return nil, fmt.Errorf("dataset %s: %w: %s is not a table (relkind %s); logical replication publishes tables only, point the dataset at a table or use refresh_mode full", t.Dataset, ErrUnsupported, ti.ident(), kind)
	}
	if err := ti.readColumns(ctx, q); err != nil {
		return nil, err
	}
	if err := ti.chooseKey(ctx, q, ident); err != nil {
		return nil, err
	}
	return ti, nil
}

func (ti *table) readColumns(ctx context.Context, q querier) error {
	rows, err := q.Query(ctx, columnsSQL, ti.oid)
	if err != nil {
		return fmt.Errorf("dataset %s: read columns of %s: %w", ti.Dataset, ti.ident(), err)
	}
	defer rows.Close()
	var fp strings.Builder
	fmt.Fprintf(&fp, "%d", ti.oid)
	for rows.Next() {
		var c column
		var base uint32
		var baseMod int32
		var enum bool
		if err := rows.Scan(&c.name, &c.oid, &c.typmod, &base, &baseMod, &enum); err != nil {
			return fmt.Errorf("dataset %s: read columns of %s: %w", ti.Dataset, ti.ident(), err)
		}
		if c.codec, err = postgres.NewCodec(base, baseMod, enum); err != nil {
			return fmt.Errorf("dataset %s: column %q of %s: %w; refresh_mode changes copies whole rows, so use refresh_mode full with refresh_sql leaving the column out, or change its type",
				ti.Dataset, c.name, ti.ident(), err)
		}
		ti.cols = append(ti.cols, c)
		fp.WriteString("," + columnFingerprint(c.name, c.oid, c.typmod))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dataset %s: read columns of %s: %w", ti.Dataset, ti.ident(), err)
	}
	ti.fingerprint = fp.String()
	return nil
}

func columnFingerprint(name string, oid uint32, typmod int32) string {
	return strconv.Quote(name) + ":" + strconv.FormatUint(uint64(oid), 10) + ":" + strconv.FormatInt(int64(typmod), 10)
}

// chooseKey picks the columns rows are matched by (the spicepod's primary_key,
// else the primary key, else the replica identity index) and checks that the
// replica identity sends them with every update and delete.
func (ti *table) chooseKey(ctx context.Context, q querier, ident string) error {
	pk, err := ti.index(ctx, q, true)
	if err != nil {
		return err
	}
	var identity []string // columns the old-row image carries; nil: all (FULL)
	switch ident {
	case "d":
		identity = pk
	case "i":
		if identity, err = ti.index(ctx, q, false); err != nil {
			return err
		}
	case "f":
	case "n":
		identity = []string{}
	}
	if identity != nil && len(identity) == 0 {
		return fmt.Errorf("dataset %s: %w: %s has no replica identity, so Postgres sends no key with updates and deletes (and refuses them once the table is published): add a primary key, or run ALTER TABLE %s REPLICA IDENTITY FULL and give the dataset acceleration.primary_key",
			ti.Dataset, ErrNoKey, ti.ident(), ti.ident())
	}
	ti.key = ti.PrimaryKey
	if len(ti.key) == 0 {
		ti.key = pk
	}
	if len(ti.key) == 0 {
		ti.key = identity
	}
	if len(ti.key) == 0 {
		return fmt.Errorf("dataset %s: %w: %s has no primary key: add one, or give the dataset acceleration.primary_key naming columns that identify a row", ti.Dataset, ErrNoKey, ti.ident())
	}
	for _, k := range ti.key {
		if !slices.ContainsFunc(ti.cols, func(c column) bool { return c.name == k }) {
			return fmt.Errorf("dataset %s: acceleration.primary_key: %s has no column %q", ti.Dataset, ti.ident(), k)
		}
		if identity != nil && !slices.Contains(identity, k) {
			return fmt.Errorf("dataset %s: %w: key column %q of %s is not in its replica identity (%s), so deletes would not carry it: run ALTER TABLE %s REPLICA IDENTITY FULL, or make acceleration.primary_key the identity's columns",
				ti.Dataset, ErrNoKey, k, ti.ident(), strings.Join(identity, ", "), ti.ident())
		}
	}
	return nil
}

func (ti *table) index(ctx context.Context, q querier, primary bool) ([]string, error) {
	rows, err := q.Query(ctx, indexSQL, ti.oid, primary)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: read key of %s: %w", ti.Dataset, ti.ident(), err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("dataset %s: read key of %s: %w", ti.Dataset, ti.ident(), err)
	}
	return cols, nil
}

// ensurePublication creates the publication for the tables, or adds the tables it
// lacks. It reports whether it added any: changes to them before now are not in
// the slot, so a feed that resumes must take a new snapshot instead.
func ensurePublication(ctx context.Context, pool execQuerier, pub string, tables []*table) (bool, error) {
	var allOps, all bool
	err := pool.QueryRow(ctx, `SELECT pubinsert AND pubupdate AND pubdelete AND pubtruncate, puballtables
		FROM pg_publication WHERE pubname = $1`, pub).Scan(&allOps, &all)
	if errors.Is(err, pgx.ErrNoRows) {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.ident()
		}
		_, err := pool.Exec(ctx, "CREATE PUBLICATION "+pgx.Identifier{pub}.Sanitize()+" FOR TABLE "+strings.Join(names, ", ")+
			" WITH (publish = 'insert, update, delete, truncate', publish_via_partition_root = true)")
		if err != nil {
			return false, fmt.Errorf("create publication %s: %w%s", pub, err, privilegeAdvice(err))
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up publication %s: %w", pub, err)
	}
	if !allOps {
		return false, fmt.Errorf("%w: publication %s does not publish every kind of change: run ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate')", ErrPublication, pub, pub)
	}
	if all {
		return false, nil
	}
	rows, err := pool.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1`, pub)
	if err != nil {
		return false, fmt.Errorf("look up publication %s: %w", pub, err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, fmt.Errorf("look up publication %s: %w", pub, err)
	}
	var missing []string
	for _, t := range tables {
		if !slices.Contains(have, t.schema+"."+t.name) {
			missing = append(missing, t.ident())
		}
	}
	if len(missing) == 0 {
		return false, nil
	}
	_, err = pool.Exec(ctx, "ALTER PUBLICATION "+pgx.Identifier{pub}.Sanitize()+" ADD TABLE "+strings.Join(missing, ", "))
	if err != nil {
		return false, fmt.Errorf("add %s to publication %s: %w%s", strings.Join(missing, ", "), pub, err, privilegeAdvice(err))
	}
	return true, nil
}

// execQuerier is a pool, for statements that change the catalog.
type execQuerier interface {
	querier
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// privilegeAdvice says what to grant when Postgres refused for lack of privilege.
func privilegeAdvice(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		return ""
	}
	return "; publications need the CREATE privilege on the database and ownership of the tables: create it as the tables' owner (CREATE PUBLICATION ... FOR TABLE ...) and name it in pg_publication, or run the runtime as the owner"
}
