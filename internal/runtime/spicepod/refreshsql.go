package spicepod

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RefreshFilter returns the parsed refresh_sql: the columns to load (nil for
// SELECT *) and the WHERE condition, verbatim in the source's dialect ("" when
// absent). Connectors apply both themselves. Both are zero when refresh_sql is
// unset; Parse has already refused any refresh_sql this cannot parse. See
// RefreshQuery for the ORDER BY and LIMIT.
func (a *Acceleration) RefreshFilter() (columns []string, where string) {
	q := a.RefreshQuery()
	return q.Columns, q.Where
}

// RefreshQuery returns the parsed refresh_sql, zero when it is unset.
func (a *Acceleration) RefreshQuery() RefreshQuery {
	if a.RefreshSQL == "" {
		return RefreshQuery{}
	}
	q, err := ParseRefreshQuery(a.RefreshSQL, "")
	if err != nil {
		return RefreshQuery{}
	}
	return q
}

// RefreshQuery is refresh_sql taken apart. The texts are verbatim, in the
// source's dialect; the connector applies them in its scan.
type RefreshQuery struct {
	Columns []string // nil for SELECT *
	Where   string   // the WHERE condition, "" when absent
	OrderBy string   // the ORDER BY list, "" when absent
	Limit   int64    // the LIMIT, -1 when absent
}

// ParseRefreshSQL parses refresh_sql and returns its columns and WHERE
// condition; see ParseRefreshQuery.
func ParseRefreshSQL(sql, dataset string) (columns []string, where string, err error) {
	q, err := ParseRefreshQuery(sql, dataset)
	return q.Columns, q.Where, err
}

// ParseRefreshQuery parses refresh_sql of the form a source can apply:
//
//	SELECT * | col[, col...] FROM <dataset> [WHERE <condition>]
//	    [ORDER BY <list>] [LIMIT <n>] [;]
//
// Unquoted column names fold to lower case, as in Postgres and DuckDB;
// quoted ones keep their case. The table must be dataset (compared case
// insensitively; any table when dataset is ""), qualified as the dataset's
// name is ("spiceai.files" or "spiceai"."files"). Joins, aliases, GROUP BY,
// OFFSET and expressions in the select list are refused, because the refresh
// is pushed to the source as a filter, not run as a query.
func ParseRefreshQuery(sql, dataset string) (RefreshQuery, error) {
	q := RefreshQuery{Limit: -1}
	toks, err := sqlTokens(sql)
	if err != nil {
		return q, err
	}
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 || toks[0].upper() != "SELECT" {
		return q, errors.New("must start with SELECT")
	}
	from := slices.IndexFunc(toks, func(t sqlToken) bool { return t.upper() == "FROM" })
	if from < 0 || from+1 >= len(toks) {
		return q, fmt.Errorf("must read FROM the dataset: SELECT * FROM %s WHERE ...", orName(dataset))
	}
	if q.Columns, err = selectList(toks[1:from]); err != nil {
		return q, err
	}
	table, n := tableName(toks[from+1:])
	if n == 0 || (dataset != "" && !strings.EqualFold(table, dataset)) {
		return q, fmt.Errorf("must read FROM this dataset, %s, not %s", orName(dataset), toks[from+1].text)
	}
	written := sql[toks[from+1].start:toks[from+n].end]
	rest := toks[from+1+n:]
	clauses, err := splitClauses(rest, written)
	if err != nil {
		return q, err
	}
	if w, ok := clauses["WHERE"]; ok {
		if len(w) == 0 {
			return q, errors.New("WHERE has no condition")
		}
		q.Where = span(sql, w)
	}
	if o, ok := clauses["ORDER BY"]; ok {
		if len(o) == 0 {
			return q, errors.New("ORDER BY has no columns")
		}
		q.OrderBy = span(sql, o)
	}
	if l, ok := clauses["LIMIT"]; ok {
		v, err := strconv.ParseInt(span(sql, l), 10, 64)
		if err != nil || v < 1 || len(l) != 1 {
			return q, fmt.Errorf("LIMIT must be a positive whole number, such as LIMIT 1000")
		}
		q.Limit = v
	}
	return q, nil
}

// tableName reads a table name that may be qualified (a.b, "A"."B") from the
// start of toks; it returns the name as a dataset name compares to it and the
// number of tokens it took (0 when toks does not start with a name).
func tableName(toks []sqlToken) (string, int) {
	var parts []string
	i := 0
	for i < len(toks) && toks[i].isIdent() {
		t := toks[i]
		if t.text[0] == '"' {
			parts = append(parts, t.ident())
		} else {
			parts = append(parts, strings.Split(strings.Trim(t.ident(), "."), ".")...)
		}
		i++
		if i < len(toks) && toks[i].text == "." {
			i++
			continue
		}
		if strings.HasSuffix(t.text, ".") && i < len(toks) {
			continue
		}
		break
	}
	if i == 0 {
		return "", 0
	}
	return strings.Join(parts, "."), i
}

// splitClauses splits what follows FROM <table> into its WHERE, ORDER BY and
// LIMIT clauses, which must come in that order, each at most once.
func splitClauses(rest []sqlToken, table string) (map[string][]sqlToken, error) {
	order := []string{"WHERE", "ORDER BY", "LIMIT"}
	out := map[string][]sqlToken{}
	cur, next := "", 0
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		kw := t.upper()
		if kw == "ORDER" && i+1 < len(rest) && rest[i+1].upper() == "BY" {
			kw = "ORDER BY"
		}
		if k := slices.Index(order, kw); k >= 0 {
			if k < next {
				return nil, fmt.Errorf("%s must come before %s in refresh_sql (WHERE, then ORDER BY, then LIMIT)", kw, cur)
			}
			cur, next = kw, k+1
			out[cur] = []sqlToken{}
			if kw == "ORDER BY" {
				i++
			}
			continue
		}
		if cur == "" {
			return nil, fmt.Errorf("only WHERE, ORDER BY and LIMIT may follow FROM %s, found %s", table, t.text)
		}
		switch kw {
		case "GROUP", "OFFSET", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY", "FETCH", ";":
			return nil, fmt.Errorf("only WHERE, ORDER BY and LIMIT may follow FROM %s, found %s", table, t.text)
		}
		out[cur] = append(out[cur], t)
	}
	return out, nil
}

// span is the source text from the first to the last token.
func span(sql string, toks []sqlToken) string {
	return strings.TrimSpace(sql[toks[0].start:toks[len(toks)-1].end])
}

func orName(dataset string) string {
	if dataset == "" {
		return "<dataset>"
	}
	return dataset
}

// selectList parses "*" or a comma-separated list of column names.
func selectList(toks []sqlToken) ([]string, error) {
	if len(toks) == 1 && toks[0].text == "*" {
		return nil, nil
	}
	bad := errors.New("the select list must be * or column names separated by commas")
	if len(toks) == 0 || len(toks)%2 == 0 {
		return nil, bad
	}
	var cols []string
	for i, t := range toks {
		if i%2 == 1 {
			if t.text != "," {
				return nil, bad
			}
			continue
		}
		if !t.isIdent() || strings.Contains(t.text, ".") {
			return nil, bad
		}
		cols = append(cols, t.ident())
	}
	return cols, nil
}

// sqlToken is a word, a quoted identifier, a string literal, a parenthesized
// group (kept whole) or a single punctuation character, with its byte span.
type sqlToken struct {
	text       string
	start, end int
}

func (t sqlToken) upper() string { return strings.ToUpper(t.text) }

func (t sqlToken) isIdent() bool {
	c := t.text[0]
	return c == '"' || c == '_' || isLetter(c)
}

// ident is the identifier's name: unquoted and unescaped, or lower-cased.
func (t sqlToken) ident() string {
	if t.text[0] == '"' {
		return strings.ReplaceAll(t.text[1:len(t.text)-1], `""`, `"`)
	}
	return strings.ToLower(t.text)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '$' || c == '.' || c >= 0x80
}

func sqlTokens(s string) ([]sqlToken, error) {
	var toks []sqlToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*"):
			return nil, errors.New("comments are not allowed")
		}
		end, err := tokenEnd(s, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, sqlToken{text: s[i:end], start: i, end: end})
		i = end
	}
	return toks, nil
}

// tokenEnd returns the end of the token that starts at s[i].
func tokenEnd(s string, i int) (int, error) {
	switch c := s[i]; {
	case c == '"' || c == '\'':
		return quotedEnd(s, i)
	case c == '(':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"', '\'':
				end, err := quotedEnd(s, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("a parenthesis is not closed")
	case isWordByte(c):
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		return j, nil
	default:
		return i + 1, nil
	}
}

// quotedEnd returns the end of the quoted text at s[i]; a doubled quote
// character escapes itself.
func quotedEnd(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			j++
			continue
		}
		return j + 1, nil
	}
	return 0, fmt.Errorf("a %c quote is not closed", q)
}
