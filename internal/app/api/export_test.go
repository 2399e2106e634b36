package api

// StatusOf exposes statusOf to the table test.
var StatusOf = statusOf
