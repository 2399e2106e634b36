//go:build !linux

package cdc

import "net"

// setLowat does nothing here: see lowat_linux.go.
func setLowat(net.Conn, int) {}
