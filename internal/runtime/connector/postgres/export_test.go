package postgres

// Explain exposes the SQLSTATE translation to the table test.
func Explain(code, user, database, table string) (kind error, advice string) {
	return target{user: user, database: database, table: table}.explain(code)
}

// ParseTable exposes the table name parser to its table test.
var ParseTable = parseTable

// SelectSQL exposes the scan query builder to its test.
var SelectSQL = selectSQL
