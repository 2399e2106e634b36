package api

// StatusOf exposes statusOf to the table test.
var StatusOf = statusOf

// ParseOrder exposes parseOrder to FuzzParseOrder.
var ParseOrder = parseOrder
