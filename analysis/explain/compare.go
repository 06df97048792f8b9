package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
)

// Verdict says whether istiod sends what meshscope predicts.
type Verdict string

const (
	Match    Verdict = "match"
	Mismatch Verdict = "mismatch"
	// Pending: no EDS has arrived for this viewpoint yet.
	Pending Verdict = "pending"
)

// DiffKind names one way actual and predicted EDS differ.
type DiffKind string

const (
	DiffMissing    DiffKind = "missing"    // predicted, not sent
	DiffUnexpected DiffKind = "unexpected" // sent, not predicted
	DiffWeight     DiffKind = "weight"
	DiffHealth     DiffKind = "health"
	// DiffLocalityWeight: the endpoint's locality group has another
	// load_balancing_weight; DiffPriority: another priority; DiffLB: the
	// cluster's load balancing (CDS) differs from istiod's default.
	DiffLocalityWeight DiffKind = "locality-weight"
	DiffPriority       DiffKind = "priority"
	DiffLB             DiffKind = "lb"
)

// Difference is one difference between actual and predicted, as a sentence.
type Difference struct {
	Kind     DiffKind `json:"kind"`
	Address  string   `json:"address"`
	Port     uint32   `json:"port"`
	Sentence string   `json:"sentence"`
}

// Key pairs an endpoint istiod sent with a predicted one: address, port,
// locality, and which occurrence of the three it is (istiod can send two
// groups with the same locality for Envoy, e.g. one from a pod label and
// one from a node).
type Key struct {
	Address  string
	Port     uint32
	Locality string
	Nth      int
}

// Keyer numbers repeated (address, port, locality) triples in order.
type Keyer map[Key]int

// Key returns the next key for an endpoint.
func (k Keyer) Key(addr string, port uint32, locality string) Key {
	b := Key{Address: addr, Port: port, Locality: locality}
	b.Nth = k[b]
	k[b]++
	return b
}

// compare matches actual endpoints to predicted ones by address, port and
// locality group and says every difference with its likely cause.
func compare(pred horizon.Prediction, actual []Actual, received bool) (Verdict, []Difference) {
	if !received {
		return Pending, nil
	}
	want := make(map[Key]horizon.Endpoint, len(pred.Endpoints))
	kw := make(Keyer, len(pred.Endpoints))
	for _, e := range pred.Endpoints {
		want[kw.Key(e.Address, e.Port, e.Locality)] = e
	}
	got := make(map[Key]Actual, len(actual))
	ka := make(Keyer, len(actual))
	for _, a := range actual {
		got[ka.Key(a.Address, a.Port, a.Locality)] = a
	}
	var diffs []Difference
	var groupSaid map[[2]string]bool
	for k, p := range want {
		a, ok := got[k]
		if !ok {
			diffs = append(diffs, Difference{Kind: DiffMissing, Address: k.Address, Port: k.Port, Sentence: missingSentence(p)})
			continue
		}
		if a.Weight != p.Weight {
			diffs = append(diffs, Difference{Kind: DiffWeight, Address: k.Address, Port: k.Port, Sentence: weightSentence(p, a, pred.ScaleFactor)})
		}
		if a.Priority != p.Priority {
			diffs = append(diffs, Difference{Kind: DiffPriority, Address: k.Address, Port: k.Port,
				Sentence: fmt.Sprintf("%s:%d is sent at priority %d, predicted %d: istiod gives locality groups priorities for locality failover (a DestinationRule with outlierDetection, failoverPriority, a service's trafficDistribution), relative to the proxy's locality: check the proxy's locality labels and the rule (a zoneAwareLbSetting is not modelled)", k.Address, k.Port, a.Priority, p.Priority)})
		}
		// The group's weight is the sum of its endpoints': say it once per
		// group, and only when no endpoint weight already explains it. An
		// unset group weight (0) is not compared: istiod always sets one,
		// and Envoy reads it only under locality weighting (a difference
		// in that shows as DiffLB).
		if a.LocalityWeight != 0 && a.LocalityWeight != p.LocalityWeight && a.Weight == p.Weight {
			if gk := [2]string{k.Locality, fmt.Sprint(a.Priority)}; !groupSaid[gk] {
				if groupSaid == nil {
					groupSaid = map[[2]string]bool{}
				}
				groupSaid[gk] = true
				diffs = append(diffs, Difference{Kind: DiffLocalityWeight, Address: k.Address, Port: k.Port,
					Sentence: fmt.Sprintf("the locality group %s of %s:%d has load_balancing_weight %d, predicted %d (the sum of its endpoints' weights): istiod weights localities itself (a localityLbSetting distribute in a DestinationRule or the mesh config), or sends endpoints in that group meshscope does not see", orNoLocality(k.Locality), k.Address, k.Port, a.LocalityWeight, p.LocalityWeight)})
			}
		}
		if a.Health != p.Health {
			diffs = append(diffs, Difference{Kind: DiffHealth, Address: k.Address, Port: k.Port,
				Sentence: fmt.Sprintf("%s:%d is sent %s, predicted %s: the endpoint's readiness changed between meshscope's and istiod's view (or a DestinationRule changes unhealthy-endpoint handling)", k.Address, k.Port, a.Health, p.Health)})
		}
	}
	for k, a := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, Difference{Kind: DiffUnexpected, Address: k.Address, Port: k.Port, Sentence: unexpectedSentence(a)})
		}
	}
	sort.Slice(diffs, func(i, j int) bool {
		if diffs[i].Address != diffs[j].Address {
			return diffs[i].Address < diffs[j].Address
		}
		if diffs[i].Port != diffs[j].Port {
			return diffs[i].Port < diffs[j].Port
		}
		return diffs[i].Kind < diffs[j].Kind
	})
	if len(diffs) == 0 {
		return Match, nil
	}
	return Mismatch, diffs
}

func describe(pod, cluster, network string) string {
	var parts []string
	if pod != "" {
		parts = append(parts, pod)
	}
	where := []string{}
	if cluster != "" {
		where = append(where, cluster)
	}
	if network != "" {
		where = append(where, network)
	}
	if len(where) > 0 {
		parts = append(parts, "in "+strings.Join(where, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " ") + ")"
}

func missingSentence(p horizon.Endpoint) string {
	switch p.Kind {
	case horizon.Gateway, horizon.Forced:
		return fmt.Sprintf("istiod does not send %s's gateway %s:%d that meshscope predicts for %d endpoint(s): check that istiod knows the gateway (/debug/networkz) and has synced %s (/debug/clusterz)",
			p.Network, p.Address, p.Port, len(p.StandsFor), orUnknown(p.Cluster))
	default:
		return fmt.Sprintf("istiod does not send %s:%d%s: check that istiod has synced %s (/debug/clusterz), and for mTLS settings meshscope does not model (DestinationRule, PeerAuthentication)",
			p.Address, p.Port, describe(orText(p.Pod, p.Workload), p.Cluster, p.Network), orUnknown(p.Cluster))
	}
}

func unexpectedSentence(a Actual) string {
	switch a.Kind {
	case horizon.Gateway, horizon.Forced:
		return fmt.Sprintf("istiod sends gateway %s:%d for cluster %s, which meshscope does not predict: istiod may know a gateway meshscope does not (meshNetworks, a resolved hostname gateway) or still count endpoints meshscope no longer sees",
			a.Address, a.Port, orUnknown(a.Cluster))
	case unknown:
		return fmt.Sprintf("istiod sends %s:%d%s, which meshscope does not see at all: is that cluster watched by meshscope (its remote secret readable, its apiserver reachable)?",
			a.Address, a.Port, describe(a.Pod, a.Cluster, ""))
	default:
		return fmt.Sprintf("istiod sends %s:%d%s, which meshscope predicts it would not: check the network labels and tlsMode of that pod as istiod sees them",
			a.Address, a.Port, describe(orText(a.Pod, a.Workload), a.Cluster, a.Network))
	}
}

func weightSentence(p horizon.Endpoint, a Actual, scale uint32) string {
	if p.Kind == horizon.Gateway || p.Kind == horizon.Forced {
		return fmt.Sprintf("gateway %s:%d has weight %d, predicted %d (%d endpoint(s) of %s × scale %d): istiod counts a different number of endpoints behind it than meshscope sees — one of the two views of %s is behind",
			a.Address, a.Port, a.Weight, p.Weight, len(p.StandsFor), p.Network, scale, orUnknown(p.Cluster))
	}
	return fmt.Sprintf("%s:%d has weight %d, predicted %d: istiod's gateway scale factor differs from meshscope's (it knows a different number of gateways)",
		a.Address, a.Port, a.Weight, p.Weight)
}

// compareLB says how the cluster's load balancing in CDS differs from the
// prediction's (istiod's defaults), where that changes the shares.
func compareLB(pred, actual horizon.LBConfig) []Difference {
	var diffs []Difference
	if actual.LocalityWeighted != pred.LocalityWeighted {
		diffs = append(diffs, Difference{Kind: DiffLB, Sentence: fmt.Sprintf("the cluster has locality_weighted_lb_config %s, predicted %s: istiod sets it for a localityLbSetting with distribute, or with failover or failoverPriority and outlier detection (or for ENABLE_LOCALITY_WEIGHTED_LB_CONFIG, which meshscope does not read); Envoy then weights localities and the shares differ", onOff(actual.LocalityWeighted), onOff(pred.LocalityWeighted))})
	}
	if (actual.PanicThreshold == 0) != (pred.PanicThreshold == 0) {
		diffs = append(diffs, Difference{Kind: DiffLB, Sentence: fmt.Sprintf("the cluster's healthy_panic_threshold is %g %%, predicted %g %%: a DestinationRule's outlierDetection.minHealthPercent (or istiod not sending unhealthy endpoints) changes when Envoy sends to unhealthy endpoints", actual.PanicThreshold, pred.PanicThreshold)})
	}
	if (actual.Policy == "RANDOM") != (pred.Policy == "RANDOM") {
		diffs = append(diffs, Difference{Kind: DiffLB, Sentence: fmt.Sprintf("the cluster's load balancer is %s, predicted %s (a DestinationRule's loadBalancer): RANDOM ignores endpoint weights", actual.Policy, pred.Policy)})
	}
	return diffs
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orNoLocality(s string) string {
	if s == "" {
		return "(no locality)"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "the cluster"
	}
	return s
}
