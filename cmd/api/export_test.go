package main

// Unexported entry points, for the external tests.
var (
	Run              = run
	Healthcheck      = healthcheck
	DefaultHealthURL = defaultHealthURL
	PostgresConfig   = postgresConfig
)
