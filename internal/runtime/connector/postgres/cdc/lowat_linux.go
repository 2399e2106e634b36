package cdc

import (
	"net"
	"syscall"
)

// setLowat sets how many bytes must be waiting on c's socket before it counts
// as readable (SO_RCVLOWAT). While the receiver holds off reading, a high
// mark keeps every arriving message from waking the Go runtime's network
// poller for nothing (Postgres sends each message of a transaction on its
// own); reads are not affected, only readiness. Connections without a socket
// of their own (TLS wraps one) are left as they are: it only saves CPU.
func setLowat(c net.Conn, n int) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	})
}
