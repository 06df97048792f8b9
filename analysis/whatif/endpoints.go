package whatif

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// Endpoint is one endpoint as a what-if compares it: an LbEndpoint istiod
// sends a sidecar, with what explain knows of it (health, locality,
// priority, Envoy's share), or a ztunnel's workload.
type Endpoint struct {
	Address string `json:"address"`
	Port    uint32 `json:"port,omitempty"`
	// Weight is the LbEndpoint's load-balancing weight (a split-horizon
	// workload's capacity); Priority its locality priority, Locality its
	// locality as Envoy receives it and LocalityWeight its group's weight.
	Weight         uint32 `json:"weight"`
	Priority       uint32 `json:"priority,omitempty"`
	Locality       string `json:"locality,omitempty"`
	LocalityWeight uint32 `json:"localityWeight,omitempty"`
	// Health is the EDS health istiod sends (HEALTHY, UNHEALTHY, or
	// UNKNOWN for a gateway or a WorkloadEntry); HealthWhy says why an
	// endpoint is not healthy.
	Health    horizon.Health `json:"health,omitempty"`
	HealthWhy string         `json:"healthWhy,omitempty"`
	// Share is the fraction of the proxy's requests Envoy sends it
	// (unhealthy entries and entries Envoy drops as duplicates get none,
	// locality weights count where the cluster uses them: horizon.Effects);
	// Shadowed: Envoy drops it for an earlier entry of the same address.
	Share    float64 `json:"share"`
	Shadowed bool    `json:"shadowed,omitempty"`
	// Kind is what the entry is: an EDS endpoint's horizon.Kind (local,
	// gateway, …) or a ztunnel workload's kind.
	Kind    endpointKind `json:"kind"`
	Cluster string       `json:"cluster,omitempty"`
	Network string       `json:"network,omitempty"`
	// UID is a workload's (ztunnel views).
	UID string `json:"uid,omitempty"`
	// Count is how many identical entries istiod sends (more than one:
	// true duplicates; entries that differ in anything, their locality
	// say, are listed apart).
	Count int `json:"count,omitempty"`
	// dup numbers entries with the same address, port, locality and
	// priority that are not identical, so each keeps a key of its own.
	dup int
}

// endpointKind is an Endpoint's kind: a sidecar's EDS entry
// (horizon.Kind) or a ztunnel's workload (ambient.WorkloadKind), one field
// for both views (JSON: kind).
type endpointKind string

// gatewayKind: the entry is a network gateway standing for endpoints
// (horizon.Gateway or horizon.Forced).
func (k endpointKind) gatewayKind() bool {
	return k == endpointKind(horizon.Gateway) || k == endpointKind(horizon.Forced)
}

// Key identifies an entry across before and after: a workload by its
// UID, an LbEndpoint by address:port in its locality and priority.
func (e Endpoint) Key() string {
	if e.UID != "" {
		return e.UID
	}
	k := model.HostPort(e.Address, e.Port) + "|" + e.Locality + "|" + strconv.FormatUint(uint64(e.Priority), 10)
	if e.dup > 0 {
		k += "#" + strconv.Itoa(e.dup)
	}
	return k
}

// String is "ADDRESS:PORT ×WEIGHT (kind, network, locality pN, health)".
func (e Endpoint) String() string {
	s := e.Address
	if e.Port != 0 {
		s = model.HostPort(e.Address, e.Port)
	}
	if e.Weight > 1 {
		s += fmt.Sprintf(" ×%d", e.Weight)
	}
	s += " (" + string(e.Kind) + ", " + orNone(e.Network)
	if e.Locality != "" || e.Priority > 0 {
		s += ", " + explain.LocalityText(e.Locality, e.Priority)
	}
	if e.Health == horizon.Unhealthy {
		s += ", UNHEALTHY"
	}
	if e.Shadowed {
		s += ", dropped by Envoy as a duplicate"
	}
	if e.Count > 1 {
		s += fmt.Sprintf(", sent %d times", e.Count)
	}
	return s + ")"
}

// same is e and o alike in everything istiod sends and Envoy makes of it.
func (e Endpoint) same(o Endpoint) bool {
	e.Count, o.Count, e.dup, o.dup = 0, 0, 0, 0
	return e == o
}

// edsEndpoints turns a prediction's endpoints into compared ones.
func edsEndpoints(p horizon.Prediction) []Endpoint { return EDSEndpoints(p.Endpoints) }

// EDSEndpoints turns predicted endpoints (horizon's, as explain's View
// lists them) into compared ones: one per LbEndpoint istiod sends,
// identical entries counted.
func EDSEndpoints(eps []horizon.Endpoint) []Endpoint {
	out := make([]Endpoint, 0, len(eps))
	at := map[string]int{}
	for _, e := range eps {
		ep := Endpoint{Address: e.Address, Port: e.Port, Weight: e.Weight, Priority: e.Priority, Locality: e.Locality, LocalityWeight: e.LocalityWeight,
			Health: e.Health, HealthWhy: healthWhy(e), Share: e.Share, Shadowed: e.Shadowed, Kind: endpointKind(e.Kind), Cluster: e.Cluster, Network: e.Network, Count: 1}
		for {
			i, ok := at[ep.Key()]
			if !ok {
				break
			}
			if out[i].same(ep) {
				out[i].Count++
				ep.Count = 0
				break
			}
			ep.dup++
		}
		if ep.Count == 0 {
			continue
		}
		at[ep.Key()] = len(out)
		out = append(out, ep)
	}
	for i := range out {
		if out[i].Count == 1 {
			out[i].Count = 0
		}
	}
	sortEndpoints(out)
	return out
}

// healthWhy says why an entry is not healthy ("" when it is): a pod that
// is not ready is sent UNHEALTHY (its EndpointSlice's ready condition,
// istiod's PILOT_SEND_UNHEALTHY_ENDPOINTS default), and Envoy sends it
// nothing while others are healthy.
func healthWhy(e horizon.Endpoint) string {
	if e.Health != horizon.Unhealthy {
		return ""
	}
	who := "the endpoint"
	if e.Pod != "" {
		who = "pod " + e.Pod
	}
	return fmt.Sprintf("%s in %s is not ready (its EndpointSlice's ready condition): istiod sends it UNHEALTHY and Envoy sends it no requests", who, orNone(e.Cluster))
}

func sortEndpoints(eps []Endpoint) {
	sort.Slice(eps, func(i, j int) bool { return eps[i].Key() < eps[j].Key() })
}
