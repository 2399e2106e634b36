//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
)

// instanceAuto is the --instance-id (SPICE_INSTANCE_ID) value that asks for an
// identity derived from the container.
const instanceAuto = "auto"

// resolveInstance returns id, or for "auto" the container's own name as the
// network's DNS knows it: Docker answers the reverse lookup of a container's
// address with "<container name>.<network>", and compose names the replicas of a
// service <project>_<service>_<n> (v1) or <project>-<service>-<n> (v2), numbers it
// keeps when it re-creates them. So each replica of `--scale accelerated=3` gets
// its own replication slot (spice_<pod>_<project>_accelerated_<n>), and the same one
// again after a re-creation. Without such a name (no Docker DNS) it falls back
// to the hostname, which outside compose is what names the machine.
func resolveInstance(ctx context.Context, id string, log *slog.Logger) (string, error) {
	if id != instanceAuto {
		return id, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("--instance-id auto: read the hostname: %w; set --instance-id or SPICE_INSTANCE_ID yourself", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if name := containerName(ctx, host); name != "" {
		log.Info("instance id from the container's name", "instance", name)
		return name, nil
	}
	log.Warn("instance id auto: no container name in DNS; using the hostname, which a re-created container may not keep", "instance", host)
	return host, nil
}

// containerName looks up host's addresses and returns the first label of the
// first name a reverse lookup gives for one of them, "" when none.
func containerName(ctx context.Context, host string) string {
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || ip.IsLoopback() {
			continue
		}
		names, err := net.DefaultResolver.LookupAddr(ctx, a)
		if err != nil {
			continue
		}
		for _, n := range names {
			if label, _, _ := strings.Cut(n, "."); label != "" && label != host {
				return label
			}
		}
	}
	return ""
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
			fmt.Fprintf(stderr, "dropped slot %s and publication %s\n", name, name)
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
