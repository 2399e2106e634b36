//go:build duckdb_arrow

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// dropSlotsArgs are the flags of `dataruntime drop-slots`.
type dropSlotsArgs struct {
	spicepod, instance string
	inactive           bool
	settle             time.Duration
}

// dropSlotsFlags returns the flag set of `dataruntime drop-slots`, filling a.
// getenv gives the default of --instance-id (SPICE_INSTANCE_ID).
func dropSlotsFlags(a *dropSlotsArgs, getenv func(string) string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("drop-slots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&a.spicepod, "spicepod", "spicepod.yaml", "the spicepod whose slots and publications are dropped")
	fs.StringVar(&a.instance, "instance-id", getenv(cdc.EnvInstance), "the instance id the runtime ran with, not auto (the runtime logs the id auto gave it); default $"+cdc.EnvInstance)
	fs.BoolVar(&a.inactive, "inactive", false, "instead, drop every slot of this spicepod's replicas (spice_<pod>_*) that no runtime streams from")
	fs.DurationVar(&a.settle, "settle", cdc.DefaultSettle, "with --inactive: how long a slot must stay inactive, its position unchanged, to be dropped")
	return fs
}

// errAutoInstance: drop-slots runs in a process of its own, so "auto" would
// name that process's container, not the runtime's.
var errAutoInstance = errors.New(`--instance-id auto names each runtime after its own container, which drop-slots cannot know: ` +
	`give the id the runtime logged at start ("instance id from the container's name" instance=...), ` +
	`or drop every slot of this spicepod that no runtime uses with --inactive`)

// dropSlots is `dataruntime drop-slots`: it drops the replication slots and
// publications the spicepod's refresh_mode: changes datasets own (a retired
// mode: file runtime keeps its slot, which holds WAL on the server). It says
// what it dropped and fails when it found nothing to drop.
func dropSlots(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	var a dropSlotsArgs
	if err := dropSlotsFlags(&a, getenv, stderr).Parse(args); err != nil {
		return 2
	}
	if a.instance == instanceAuto && !a.inactive {
		fmt.Fprintf(stderr, "drop-slots: %v\n", errAutoInstance)
		return 2
	}
	pod, err := spicepod.Load(a.spicepod, spicepod.EnvLookup)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfgs, err := cdc.Configs(pod.Name, a.instance, postgresDatasets(pod.Datasets))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if len(cfgs) == 0 {
		fmt.Fprintln(stderr, "drop-slots: no dataset of this spicepod uses refresh_mode: changes; nothing to drop")
		return 0
	}
	if a.inactive {
		return dropInactive(ctx, pod.Name, cfgs, a.settle, stderr)
	}
	code := 0
	for _, c := range cfgs {
		if !dropOne(ctx, c, stderr) {
			code = 1
		}
	}
	return code
}

// dropOne drops one Config's slot and publication and reports what it found.
func dropOne(ctx context.Context, c cdc.Config, stderr io.Writer) bool {
	cc := c.Postgres.PoolConfig.ConnConfig
	d, err := cdc.Drop(ctx, c.Postgres, c.Slot, c.Publication)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "drop-slots: %v\n", err)
		return false
	case !d.Slot && !d.Publication:
		fmt.Fprintf(stderr, "drop-slots: no slot %s and no publication %s on %s/%s: nothing dropped; check --instance-id "+
			"(the runtime's log names its slot: slot=...), or use --inactive to drop every slot of this spicepod that no runtime uses\n",
			c.Slot, c.Publication, cc.Host, cc.Database)
		return false
	}
	for _, o := range []struct {
		kind, name string
		dropped    bool
	}{{"slot", c.Slot, d.Slot}, {"publication", c.Publication, d.Publication}} {
		if o.dropped {
			fmt.Fprintf(stderr, "dropped %s %s on %s/%s\n", o.kind, o.name, cc.Host, cc.Database)
		} else {
			fmt.Fprintf(stderr, "no %s %s on %s/%s: already gone\n", o.kind, o.name, cc.Host, cc.Database)
		}
	}
	return true
}

// dropInactive is `drop-slots --inactive`: the clean-up after replicas that are
// gone. It drops, in each source database, the slots named for this spicepod's
// replicas (spice_<pod>_<instance>) that no runtime streams from.
func dropInactive(ctx context.Context, pod string, cfgs []cdc.Config, settle time.Duration, stderr io.Writer) int {
	prefix := cdc.Name(pod, "", "") + "_"
	code := 0
	for _, c := range cfgs {
		cc := c.Postgres.PoolConfig.ConnConfig
		fmt.Fprintf(stderr, "looking for slots %s* on %s/%s that stay inactive for %s\n", prefix, cc.Host, cc.Database, settle)
		dropped, err := cdc.DropInactive(ctx, c.Postgres, prefix, settle)
		for _, name := range dropped {
			fmt.Fprintf(stderr, "dropped %s\n", name)
		}
		if err != nil {
			fmt.Fprintf(stderr, "drop-slots: %v\n", err)
			code = 1
		}
		if len(dropped) == 0 && err == nil {
			fmt.Fprintln(stderr, "no inactive slot to drop")
		}
	}
	return code
}
