package explain

import (
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// unknown is the kind of an actual endpoint meshscope cannot place.
const unknown horizon.Kind = "unknown"

// Actual is one endpoint istiod really sent, with what meshscope knows of it.
type Actual struct {
	Address string         `json:"address"`
	Port    uint32         `json:"port"`
	Weight  uint32         `json:"weight"`
	Health  horizon.Health `json:"health"`
	// Locality, LocalityWeight and Priority are those of the endpoint's
	// LocalityLbEndpoints (locality as region/zone/subzone).
	Locality       string `json:"locality,omitempty"`
	LocalityWeight uint32 `json:"localityWeight"`
	Priority       uint32 `json:"priority"`
	// Effect is what Envoy makes of it (see ApplyEffects).
	horizon.Effect
	Kind    horizon.Kind `json:"kind"`
	Cluster string       `json:"cluster,omitempty"`
	Network string       `json:"network,omitempty"`
	Pod     string       `json:"pod,omitempty"`
	// Workload names a non-pod endpoint (WorkloadEntry/NAME,
	// ServiceEntry/NAME[i]).
	Workload string `json:"workload,omitempty"`
	// StandsFor lists, for a gateway endpoint, the endpoints meshscope
	// believes are behind it (from the prediction for the same gateway).
	StandsFor []horizon.Ref `json:"standsFor,omitempty"`
}

// attribute names the pod or gateway behind every endpoint of an actual
// EDS response. The `istio.workload` metadata says the cluster (and the pod);
// the snapshot supplies networks and gateway addresses.
func attribute(snap *model.Snapshot, hostname string, la xdsclient.LoadAssignment, proxy horizon.Proxy, pred horizon.Prediction) []Actual {
	svc := snap.Service(hostname)
	out := make([]Actual, 0, len(la.Endpoints))
	// Gateway entries pair with predicted ones by address, port, locality
	// and occurrence: istiod sends a gateway once per locality group, each
	// standing for that group's endpoints.
	var gws map[Key]horizon.Endpoint
	kp, ka := Keyer{}, Keyer{}
	for _, p := range pred.Endpoints {
		if p.Kind == horizon.Gateway || p.Kind == horizon.Forced {
			if gws == nil {
				gws = map[Key]horizon.Endpoint{}
			}
			gws[kp.Key(p.Address, p.Port, p.Locality)] = p
		}
	}
	for _, e := range la.Endpoints {
		a := Actual{Address: e.Address, Port: e.Port, Weight: e.Weight, Health: horizon.Health(e.Health),
			Locality: strings.TrimRight(e.Locality.String(), "/"), LocalityWeight: e.LocalityWeight, Priority: e.Priority,
			Kind: unknown, Cluster: e.Workload.Cluster, Workload: e.Workload.Name}
		if e.Gateway() {
			a.Kind = horizon.Gateway
			if proxy.Network == "" {
				a.Kind = horizon.Forced
			}
			if g := findGateway(snap, e.Address, e.Port); g != nil {
				a.Network = g.Network
			}
			if p, ok := gws[ka.Key(e.Address, e.Port, a.Locality)]; ok {
				a.StandsFor = p.StandsFor
				if a.Network == "" {
					a.Network = p.Network
				}
			}
		} else if ep := findEndpoint(svc, a.Cluster, e.Address); ep != nil {
			a.Cluster, a.Network = ep.Cluster, ep.Network
			// istio.workload names the pod's workload (its Deployment), or
			// a WorkloadEntry's: the snapshot knows the pod.
			a.Pod, a.Workload = ep.Pod, ep.Workload
			switch {
			case proxy.Network == "" || ep.Network == "" || proxy.Network == ep.Network:
				a.Kind = horizon.Local
			default:
				a.Kind = horizon.Leaked
			}
		}
		out = append(out, a)
	}
	return out
}

// applyEffects sets what Envoy makes of each actual endpoint: its share of
// requests under lb (the cluster's CDS settings), and whether Envoy drops
// it as a duplicate address.
func applyEffects(actual []Actual, lb horizon.LBConfig) {
	entries := make([]horizon.LBEntry, len(actual))
	for i, a := range actual {
		entries[i] = horizon.LBEntry{Address: a.Address, Port: a.Port, Weight: a.Weight, Health: a.Health,
			Locality: a.Locality, Priority: a.Priority, LocalityWeight: a.LocalityWeight}
	}
	for i, ef := range horizon.Effects(entries, lb) {
		actual[i].Effect = ef
	}
}

// lbOf is the load-balancing part of a CDS cluster.
func lbOf(c xdsclient.Cluster) horizon.LBConfig {
	return horizon.LBConfig{Policy: c.LBPolicy, LocalityWeighted: c.LocalityWeighted, PanicThreshold: c.PanicThreshold}
}

func findGateway(snap *model.Snapshot, addr string, port uint32) *model.Gateway {
	if snap == nil {
		return nil
	}
	for i, g := range snap.Gateways {
		if g.Address == addr && g.Port == port {
			return &snap.Gateways[i]
		}
	}
	return nil
}

// findEndpoint looks the address up in the service, in the named cluster
// first (addresses of different clusters may overlap), then anywhere, then
// among its ServiceEntries' workloads (those of the named cluster first).
func findEndpoint(svc *model.Service, cluster, addr string) *model.Endpoint {
	if svc == nil {
		return nil
	}
	find := func(eps []model.Endpoint, cluster string) *model.Endpoint {
		for i := range eps {
			if eps[i].Address == addr && (cluster == "" || eps[i].Cluster == cluster) {
				return &eps[i]
			}
		}
		return nil
	}
	if sic := svc.Clusters[cluster]; sic != nil {
		if ep := find(sic.Endpoints, ""); ep != nil {
			return ep
		}
	}
	for _, sic := range svc.Clusters {
		if ep := find(sic.Endpoints, ""); ep != nil {
			return ep
		}
	}
	for _, c := range []string{cluster, ""} {
		for _, se := range svc.ServiceEntries {
			if ep := find(se.Endpoints, c); ep != nil {
				return ep
			}
		}
	}
	return nil
}
