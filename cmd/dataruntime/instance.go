//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// instanceAuto is the --instance-id (SPICE_INSTANCE_ID) value that asks for an
// identity derived from the container.
const instanceAuto = "auto"

// resolveInstance returns id, or for "auto" the container's own name as the
// network's DNS knows it: Docker's DNS answers the reverse lookup of a
// container's address with "<container name>.<network>", and compose names the replicas of a
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
// name the DNS server gives for one of them in a reverse lookup, "" when none.
// It asks the server itself: Go's resolver would answer from /etc/hosts, where
// Docker writes the hostname (the container id), not the container's name.
func containerName(ctx context.Context, host string) string {
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return ""
	}
	servers := nameservers("/etc/resolv.conf")
	for _, a := range addrs {
		ip := net.ParseIP(a)
		if ip == nil || ip.IsLoopback() || ip.To4() == nil {
			continue
		}
		for _, ns := range servers {
			if name := ptr(ctx, ns, ip.To4()); name != "" {
				if label, _, _ := strings.Cut(name, "."); label != "" && label != host {
					return label
				}
			}
		}
	}
	return ""
}

// nameservers reads the nameserver lines of a resolv.conf.
func nameservers(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			out = append(out, net.JoinHostPort(f[1], "53"))
		}
	}
	return out
}

// ptr asks the DNS server at ns for the PTR name of ip (IPv4), "" on any failure.
func ptr(ctx context.Context, ns string, ip net.IP) string {
	name, err := dnsmessage.NewName(fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa.", ip[3], ip[2], ip[1], ip[0]))
	if err != nil {
		return ""
	}
	q := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: 0xc0de, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: name, Type: dnsmessage.TypePTR, Class: dnsmessage.ClassINET}},
	}
	packed, err := q.Pack()
	if err != nil {
		return ""
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", ns)
	if err != nil {
		return ""
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(packed); err != nil {
		return ""
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		return ""
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil || m.Header.ID != q.Header.ID {
		return ""
	}
	for _, ans := range m.Answers {
		if r, ok := ans.Body.(*dnsmessage.PTRResource); ok {
			return r.PTR.String()
		}
	}
	return ""
}
