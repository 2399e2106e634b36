package cdc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// EnvInstance names the environment variable that sets a runtime's instance id
// (--instance-id), which slot names include. Runtimes with the same spicepod name
// that follow the same Postgres server (replicas) need distinct instances, each
// stable across restarts so that mode: file can resume.
const EnvInstance = "SPICE_INSTANCE_ID"

// maxName is Postgres's limit on slot and publication names (NAMEDATALEN-1).
const maxName = 63

// slotName is what Postgres accepts as a replication slot name; publication names
// are held to the same rule because pgoutput's publication_names folds case.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// Table is one dataset a feed serves.
type Table struct {
	// Dataset is the engine's name of the dataset (lower case).
	Dataset string
	// Table is the Postgres table, "[schema.]table" as in the dataset's from:.
	Table string
	// PrimaryKey is the spicepod's primary_key; nil means the table's primary key
	// (or its replica identity index).
	PrimaryKey []string
}

// Config is one feed: the datasets of one runtime that share a source database.
type Config struct {
	// Postgres is the connection, from the first dataset's params.
	Postgres postgres.Config
	// Slot and Publication are the names the feed owns (pg_replication_slot and
	// pg_publication, else derived from the spicepod name and the instance).
	Slot        string
	Publication string
	// File is true when the datasets use mode: file, so the slot is kept across
	// restarts and the feed resumes from the stored position.
	File   bool
	Tables []Table
}

// Configs groups the datasets with refresh_mode: changes by source database, one
// Config (one slot, one publication) per database. pod is the spicepod's name and
// instance tells replicas of one spicepod apart ("" for a single runtime). Datasets
// without acceleration or with another refresh mode are skipped. Errors name the
// dataset and the field.
func Configs(pod, instance string, datasets []spicepod.Dataset) ([]Config, error) {
	groups := map[string]*Config{}
	var order []string
	for _, ds := range datasets {
		if !ds.Accelerated() || !ds.Acceleration.RefreshMode.Streams() {
			continue
		}
		key, cfg, err := datasetConfig(ds)
		if err != nil {
			return nil, err
		}
		g, ok := groups[key]
		if !ok {
			g = &Config{Postgres: cfg, File: ds.Acceleration.Mode == spicepod.ModeFile}
			groups[key] = g
			order = append(order, key)
		} else if g.File != (ds.Acceleration.Mode == spicepod.ModeFile) {
			return nil, fmt.Errorf("dataset %s: acceleration.mode %s differs from the other refresh_mode: changes datasets of the same database; they share one replication slot, so give them the same mode",
				ds.Name, ds.Acceleration.Mode)
		}
		if err := g.setNames(ds, cfg); err != nil {
			return nil, err
		}
		_, path := ds.Connector()
		g.Tables = append(g.Tables, Table{Dataset: strings.ToLower(ds.Name), Table: path, PrimaryKey: ds.Acceleration.PrimaryKey})
	}
	out := make([]Config, 0, len(order))
	slots := map[string]bool{}
	for _, key := range order {
		g := groups[key]
		db := ""
		if len(order) > 1 {
			db = g.Postgres.PoolConfig.ConnConfig.Database
		}
		if g.Slot == "" {
			g.Slot = Name(pod, instance, db)
		}
		if g.Publication == "" {
			g.Publication = Name(pod, instance, db)
		}
		if slots[g.Slot] {
			return nil, fmt.Errorf("dataset %s: two source databases would share replication slot %s; give each database's datasets their own pg_replication_slot", g.Tables[0].Dataset, g.Slot)
		}
		slots[g.Slot] = true
		out = append(out, *g)
	}
	return out, nil
}

// datasetConfig checks one dataset and returns its database's grouping key.
func datasetConfig(ds spicepod.Dataset) (string, postgres.Config, error) {
	scheme, _ := ds.Connector()
	acc := ds.Acceleration
	switch {
	case scheme != "postgres":
		return "", postgres.Config{}, fmt.Errorf("dataset %s: %w: refresh_mode changes needs a postgres: dataset, not %s:", ds.Name, ErrUnsupported, scheme)
	case acc.RefreshSQL != "":
		return "", postgres.Config{}, fmt.Errorf("dataset %s: %w: refresh_sql; the change stream carries whole rows of the whole table, remove refresh_sql or use refresh_mode full", ds.Name, ErrUnsupported)
	case acc.RefreshDataWindow > 0:
		return "", postgres.Config{}, fmt.Errorf("dataset %s: %w: refresh_data_window; remove it or use refresh_mode full", ds.Name, ErrUnsupported)
	}
	cfg, err := postgres.ParseParams(ds.Params)
	if err != nil {
		return "", cfg, fmt.Errorf("dataset %s: %w", ds.Name, err)
	}
	cc := cfg.PoolConfig.ConnConfig
	return fmt.Sprintf("%s:%d/%s/%s", cc.Host, cc.Port, cc.Database, cc.User), cfg, nil
}

// setNames takes pg_replication_slot and pg_publication from a dataset, refusing
// names Postgres would not take as they are and datasets that disagree.
func (g *Config) setNames(ds spicepod.Dataset, cfg postgres.Config) error {
	for _, p := range []struct {
		param, value string
		dst          *string
	}{
		{postgres.ParamReplicationSlot, cfg.ReplicationSlot, &g.Slot},
		{postgres.ParamPublication, cfg.Publication, &g.Publication},
	} {
		if p.value == "" {
			continue
		}
		if !slotName.MatchString(p.value) {
			return fmt.Errorf("dataset %s: param %s %q: use 1 to 63 lower-case letters, digits and underscores", ds.Name, p.param, p.value)
		}
		if *p.dst != "" && *p.dst != p.value {
			return fmt.Errorf("dataset %s: param %s %q differs from %q given by another dataset of the same database; they share one, give the same name or leave it out", ds.Name, p.param, p.value, *p.dst)
		}
		*p.dst = p.value
	}
	return nil
}

// Name derives a slot or publication name from the spicepod name, the instance
// and, when a runtime follows several databases, the database: lower-case letters,
// digits and underscores, "spice_" first, at most 63 characters (a hash of the
// whole replaces the tail of a longer one).
func Name(pod, instance, database string) string {
	parts := []string{"spice", pod}
	for _, p := range []string{instance, database} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		for _, r := range strings.ToLower(p) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	name := b.String()
	if len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return name[:maxName-len(suffix)] + suffix
}

// datasets lists the datasets of the config, sorted.
func (c Config) datasets() []string {
	out := make([]string, len(c.Tables))
	for i, t := range c.Tables {
		out[i] = t.Dataset
	}
	sort.Strings(out)
	return out
}
