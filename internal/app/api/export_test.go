package api

// StatusOf exposes statusOf to the table test.
var StatusOf = statusOf

// ParseOrder exposes parseOrder to FuzzParseOrder.
var ParseOrder = parseOrder

// AppendOrderJSON exposes appendOrderJSON to its test against encoding/json.
var AppendOrderJSON = appendOrderJSON
