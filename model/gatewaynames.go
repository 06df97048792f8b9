package model

import (
	"slices"
	"time"
)

// Gateways with DNS names. A gateway Service whose load balancer has a
// hostname (an AWS NLB), a Gateway API Gateway address of type Hostname or
// a meshNetworks gateway address that is a name is resolved by istiod
// itself (RESOLVE_HOSTNAME_GATEWAYS, on by default; pilot/pkg/model/
// network.go resolveHostnameGateways): every A and AAAA record becomes a
// gateway with the same network and ports, a name that resolves to
// nothing is dropped, and the answer is asked again when its TTL (at least
// 30 s, at most 1 h) runs out. The snapshot holds the answers meshscope got
// (GatewayNames) and the gateways they became (Gateway.Name).

// ResolvedBy says who asked DNS for a gateway name.
type ResolvedBy string

const (
	// ResolvedByMeshscope: meshscope asked the DNS servers of where it
	// runs (its resolv.conf), which may answer differently from istiod's.
	ResolvedByMeshscope ResolvedBy = "meshscope"
	// ResolvedByIstiod: the addresses istiod lists in /debug/networkz.
	ResolvedByIstiod ResolvedBy = "istiod"
)

// GatewayName is one gateway DNS name and what it resolved to.
type GatewayName struct {
	Name string `json:"name"`
	// Addresses are the A and AAAA answers, sorted (as istiod sorts
	// them); none means the name does not resolve and istiod drops its
	// gateways.
	Addresses []string `json:"addresses,omitempty"`
	// TTL is how long the answer is kept (istiod's bounds applied).
	TTL        time.Duration `json:"ttl,omitempty"`
	ResolvedAt time.Time     `json:"resolvedAt,omitzero"`
	// Err says why the last query failed (every server failed for A and
	// AAAA alike); Addresses then are the previous answer, which istiod
	// keeps too. Pending: not asked yet.
	Err     string     `json:"error,omitempty"`
	Pending bool       `json:"pending,omitempty"`
	By      ResolvedBy `json:"by"`
	// Previous are the addresses before the answer last changed, and
	// ChangedAt when it changed (zero: not since meshscope started).
	Previous  []string  `json:"previous,omitempty"`
	ChangedAt time.Time `json:"changedAt,omitzero"`
}

// Resolves reports whether the name gives gateways.
func (n GatewayName) Resolves() bool { return len(n.Addresses) > 0 }

// GatewayName returns the answer for a gateway DNS name, if any.
func (s *Snapshot) GatewayName(name string) (GatewayName, bool) {
	i := slices.IndexFunc(s.GatewayNames, func(n GatewayName) bool { return n.Name == name })
	if i < 0 {
		return GatewayName{}, false
	}
	return s.GatewayNames[i], true
}
