package model

import (
	"net"
	"strconv"
)

// HostPort joins an address (or host name) and a port as "host:port",
// bracketing an IPv6 address ("[fd00::1]:15443"): the one way meshscope
// writes and keys an endpoint's or gateway's address, unambiguous for IPv6.
func HostPort[P ~int32 | ~uint32 | ~int](host string, port P) string {
	return net.JoinHostPort(host, strconv.FormatInt(int64(port), 10))
}
