package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/collector/horizon"
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
)

// Difference is one difference between actual and predicted, as a sentence.
type Difference struct {
	Kind     DiffKind `json:"kind"`
	Address  string   `json:"address"`
	Port     uint32   `json:"port"`
	Sentence string   `json:"sentence"`
}

type key struct {
	addr     string
	port     uint32
	locality string
}

// Compare matches actual endpoints to predicted ones by address, port and
// locality group and says every difference with its likely cause.
func Compare(pred horizon.Prediction, actual []Actual, received bool) (Verdict, []Difference) {
	if !received {
		return Pending, nil
	}
	want := map[key]horizon.Endpoint{}
	for _, e := range pred.Endpoints {
		want[key{e.Address, e.Port, e.Locality}] = e
	}
	got := map[key]Actual{}
	for _, a := range actual {
		got[key{a.Address, a.Port, a.Locality}] = a
	}
	var diffs []Difference
	for k, p := range want {
		a, ok := got[k]
		if !ok {
			diffs = append(diffs, Difference{Kind: DiffMissing, Address: k.addr, Port: k.port, Sentence: missingSentence(p)})
			continue
		}
		if a.Weight != p.Weight {
			diffs = append(diffs, Difference{Kind: DiffWeight, Address: k.addr, Port: k.port, Sentence: weightSentence(p, a, pred.ScaleFactor)})
		}
		if a.Health != p.Health {
			diffs = append(diffs, Difference{Kind: DiffHealth, Address: k.addr, Port: k.port,
				Sentence: fmt.Sprintf("%s:%d is sent %s, predicted %s: the endpoint's readiness changed between meshscope's and istiod's view (or a DestinationRule changes unhealthy-endpoint handling)", k.addr, k.port, a.Health, p.Health)})
		}
	}
	for k, a := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, Difference{Kind: DiffUnexpected, Address: k.addr, Port: k.port, Sentence: unexpectedSentence(a)})
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
	case Unknown:
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

func orUnknown(s string) string {
	if s == "" {
		return "the cluster"
	}
	return s
}
