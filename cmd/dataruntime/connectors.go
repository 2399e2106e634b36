//go:build duckdb_arrow

package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/duckdbsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/file"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/localpod"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// supportedConnectors is what a refusal offers instead.
const supportedConnectors = "postgres:, flightsql:, spice.ai:, file:, duckdb: and localpod:"

// localSource builds the connectors that read this machine: file:, duckdb: and
// localpod:. Any other scheme is refused, naming what it is upstream and what
// to use here.
func (m *Main) localSource(ctx context.Context, d spicepod.Dataset, scheme, path string) (engine.Source, error) {
	switch scheme {
	case "file":
		var accel map[string]string
		if d.Acceleration != nil {
			accel = d.Acceleration.Params
		}
		cfg, err := file.ParseParams(path, d.Params, accel, m.Pod.Paths())
		if err != nil {
			return nil, fmt.Errorf("%w (spicepod %s)", err, m.Config.Spicepod)
		}
		src := file.NewSource(cfg)
		src.Logger = m.Logger.With("dataset", d.Name)
		if err := src.Open(ctx); err != nil {
			return nil, err
		}
		m.sources = append(m.sources, src)
		return src.Engine(), nil
	case "duckdb":
		if err := duckdbsrc.CheckTable(path); err != nil {
			return nil, err
		}
		cfg, err := duckdbsrc.ParseParams(d.Params, m.Pod.Paths())
		if err != nil {
			return nil, fmt.Errorf("%w (spicepod %s)", err, m.Config.Spicepod)
		}
		src := duckdbsrc.NewSource(cfg, path)
		src.Logger = m.Logger.With("dataset", d.Name)
		if err := src.Open(ctx); err != nil {
			return nil, err
		}
		m.sources = append(m.sources, src)
		return src, nil
	case "localpod":
		if len(d.Params) > 0 {
			return nil, errors.New("the localpod connector takes no params; remove them (the parent dataset has its own)")
		}
		parent, err := m.localpodParent(d, path)
		if err != nil {
			return nil, err
		}
		return localpod.NewSource(m.Engine, parent), nil
	}
	if c, ok := upstreamConnectors[strings.ToLower(scheme)]; ok {
		instead := c.instead
		if instead == "" {
			instead = "load the data into Postgres and read it with postgres:, or export it to a CSV, Parquet or JSON file and read it with file:"
		}
		return nil, fmt.Errorf("connector %s: reads %s upstream and is not supported by this runtime, which reads %s; %s", scheme, c.what, supportedConnectors, instead)
	}
	return nil, fmt.Errorf("connector %q is not supported; this runtime reads %s", scheme, supportedConnectors)
}

// localpodParent checks that a localpod dataset names another dataset of the
// spicepod and that following localpod: from there never comes back to it.
func (m *Main) localpodParent(d spicepod.Dataset, path string) (string, error) {
	byName := map[string]spicepod.Dataset{}
	var names []string
	for _, x := range m.Pod.Datasets {
		byName[strings.ToLower(x.Name)] = x
		if !strings.EqualFold(x.Name, d.Name) {
			names = append(names, x.Name)
		}
	}
	sort.Strings(names)
	parent := strings.TrimSpace(path)
	for _, prefix := range []string{"spice.public.", "public."} { // upstream's full table names
		if p, ok := strings.CutPrefix(strings.ToLower(parent), prefix); ok {
			if _, known := byName[p]; known {
				parent = p
			}
		}
	}
	p, ok := byName[strings.ToLower(parent)]
	switch {
	case strings.EqualFold(parent, d.Name):
		return "", fmt.Errorf("from: localpod:%s reads the dataset itself; name another dataset of the spicepod", path)
	case !ok:
		return "", fmt.Errorf("from: localpod:%s: no dataset %q in the spicepod; localpod reads a dataset of this runtime: %s", path, parent, strings.Join(names, ", "))
	}
	// Follow localpod: up from the parent: it must reach a dataset that reads a
	// source, not come back.
	seen := map[string]bool{strings.ToLower(d.Name): true}
	for x := p; ; {
		scheme, next := x.Connector()
		if scheme != "localpod" {
			return p.Name, nil
		}
		seen[strings.ToLower(x.Name)] = true
		key := strings.ToLower(strings.TrimSpace(next))
		if seen[key] {
			return "", fmt.Errorf("from: localpod:%s: datasets read each other in a loop through localpod:%s; one of them must read a source", path, next)
		}
		if x, ok = byName[key]; !ok {
			return p.Name, nil // reported on that dataset
		}
	}
}

// upstreamConnectors are upstream's connectors this runtime does not have, by
// from: prefix, and what they read.
type refused struct {
	what    string // what upstream's connector reads
	instead string // what to do here; a generic hint when empty
}

var upstreamConnectors = map[string]refused{
	"s3":            {what: "Amazon S3 object storage", instead: "copy the files locally and read them with file:"},
	"abfs":          {what: "Azure Blob Storage", instead: "copy the files locally and read them with file:"},
	"abfss":         {what: "Azure Blob Storage", instead: "copy the files locally and read them with file:"},
	"http":          {what: "files over HTTP", instead: "download them and read them with file:"},
	"https":         {what: "files over HTTPS", instead: "download them and read them with file:"},
	"ftp":           {what: "files over FTP", instead: "download them and read them with file:"},
	"sftp":          {what: "files over SFTP", instead: "download them and read them with file:"},
	"smb":           {what: "files over SMB", instead: "mount the share and read them with file:"},
	"nfs":           {what: "files over NFS", instead: "mount the export and read them with file:"},
	"mysql":         {what: "MySQL"},
	"mssql":         {what: "Microsoft SQL Server"},
	"oracle":        {what: "Oracle"},
	"odbc":          {what: "databases over ODBC"},
	"adbc":          {what: "databases over ADBC"},
	"clickhouse":    {what: "ClickHouse"},
	"databricks":    {what: "Databricks"},
	"snowflake":     {what: "Snowflake"},
	"spark":         {what: "Apache Spark"},
	"dremio":        {what: "Dremio", instead: "it speaks Flight SQL, so try flightsql:"},
	"delta_lake":    {what: "Delta Lake tables"},
	"iceberg":       {what: "Apache Iceberg tables"},
	"ducklake":      {what: "DuckLake catalogs"},
	"glue":          {what: "AWS Glue catalogs"},
	"dynamodb":      {what: "Amazon DynamoDB"},
	"mongodb":       {what: "MongoDB"},
	"cosmosdb":      {what: "Azure Cosmos DB"},
	"scylladb":      {what: "ScyllaDB"},
	"elasticsearch": {what: "Elasticsearch"},
	"kafka":         {what: "Apache Kafka topics"},
	"debezium":      {what: "Debezium change streams over Kafka", instead: "read Postgres with postgres: and refresh_mode: changes"},
	"github":        {what: "GitHub repositories, issues and pull requests"},
	"graphql":       {what: "GraphQL endpoints"},
	"sharepoint":    {what: "Microsoft SharePoint"},
	"imap":          {what: "e-mail over IMAP"},
	"huggingface":   {what: "Hugging Face datasets"},
	"memory":        {what: "in-memory tables written through the runtime", instead: "datasets are read-only here"},
	"redshift":      {what: "Amazon Redshift", instead: "it speaks the Postgres protocol, so try postgres:"},
}
