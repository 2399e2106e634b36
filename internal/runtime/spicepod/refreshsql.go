package spicepod

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// RefreshFilter returns the parsed refresh_sql: the columns to load (nil for
// SELECT *) and the WHERE condition, verbatim in the source's dialect ("" when
// absent). Connectors apply both themselves. Both are zero when refresh_sql is
// unset; Parse has already refused any refresh_sql this cannot parse.
func (a *Acceleration) RefreshFilter() (columns []string, where string) {
	if a.RefreshSQL == "" {
		return nil, ""
	}
	columns, where, err := ParseRefreshSQL(a.RefreshSQL, "")
	if err != nil {
		return nil, ""
	}
	return columns, where
}

// ParseRefreshSQL parses refresh_sql of the only form a source can apply:
//
//	SELECT * | col[, col...] FROM <dataset> [WHERE <condition>] [;]
//
// Unquoted column names fold to lower case, as in Postgres and DuckDB;
// quoted ones keep their case. The table must be dataset (compared case
// insensitively; any table when dataset is ""). Joins, aliases, GROUP BY,
// ORDER BY, LIMIT and expressions in the select list are refused, because
// the refresh is pushed to the source as a filter, not run as a query.
func ParseRefreshSQL(sql, dataset string) (columns []string, where string, err error) {
	toks, err := sqlTokens(sql)
	if err != nil {
		return nil, "", err
	}
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 || toks[0].upper() != "SELECT" {
		return nil, "", errors.New("must start with SELECT")
	}
	from := slices.IndexFunc(toks, func(t sqlToken) bool { return t.upper() == "FROM" })
	if from < 0 || from+1 >= len(toks) {
		return nil, "", fmt.Errorf("must read FROM the dataset: SELECT * FROM %s WHERE ...", orName(dataset))
	}
	if columns, err = selectList(toks[1:from]); err != nil {
		return nil, "", err
	}
	table := toks[from+1]
	if !table.isIdent() || (dataset != "" && !strings.EqualFold(table.ident(), dataset)) {
		return nil, "", fmt.Errorf("must read FROM this dataset, %s, not %s", orName(dataset), table.text)
	}
	rest := toks[from+2:]
	if len(rest) == 0 {
		return columns, "", nil
	}
	if rest[0].upper() != "WHERE" {
		return nil, "", fmt.Errorf("only a WHERE clause may follow FROM %s, found %s", table.text, rest[0].text)
	}
	if len(rest) == 1 {
		return nil, "", errors.New("WHERE has no condition")
	}
	for _, t := range rest[1:] {
		switch t.upper() {
		case "GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY", ";":
			return nil, "", fmt.Errorf("only a WHERE condition may follow FROM %s, found %s", table.text, t.text)
		}
	}
	return columns, strings.TrimSpace(sql[rest[1].start:rest[len(rest)-1].end]), nil
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
