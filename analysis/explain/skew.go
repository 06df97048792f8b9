package explain

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// skewProblem reports cross-network skew only where the split a proxy makes
// differs from what the endpoint counts give. A share that merely follows
// the counts (1 local pod, 3 remote ones: 75 % crosses) is how the mesh is
// meant to work, not a problem. The split is computed the way Envoy spreads
// traffic over what istiod sends: by weight, over healthy endpoints only
// (the gateway endpoint itself is never unhealthy), and with one host per
// address (istio/istio#56355: the same gateway sent in two locality groups
// is kept once). It strays from the counts when istiod counts unhealthy
// remote endpoints in a gateway's weight, when a gateway address is sent
// twice, or when weights are uneven. threshold is in percentage points.
func skewProblem(host string, port int32, v horizon.Proxy, p horizon.Prediction, threshold int) (model.Problem, bool) {
	var localW, crossW uint64
	var localOK, remoteOK, remoteSick, dups int
	seen := map[string]bool{}
	counted := map[horizon.Ref]bool{}
	for _, e := range p.Endpoints {
		switch e.Kind {
		case horizon.Local:
			if e.Health == horizon.Healthy {
				localW += uint64(e.Weight)
				localOK++
			}
		case horizon.Gateway:
			k := model.HostPort(e.Address, e.Port)
			if seen[k] {
				dups++
			} else {
				seen[k] = true
				crossW += uint64(e.Weight)
			}
			for _, r := range e.StandsFor {
				if counted[r] {
					continue
				}
				counted[r] = true
				if r.Health == horizon.Healthy {
					remoteOK++
				} else {
					remoteSick++
				}
			}
		}
	}
	if crossW == 0 || localOK+remoteOK == 0 {
		return model.Problem{}, false
	}
	got := percent(crossW, localW+crossW)
	want := percent(uint64(remoteOK), uint64(localOK+remoteOK))
	if abs(got-want) <= threshold {
		return model.Problem{}, false
	}
	var causes []string
	if remoteSick > 0 {
		causes = append(causes, fmt.Sprintf("the gateway weight counts %d unhealthy endpoint(s) of other networks (istiod counts unhealthy endpoints in gateway weights)", remoteSick))
	}
	if dups > 0 {
		causes = append(causes, fmt.Sprintf("%d gateway address(es) are sent in more than one locality group and Envoy keeps one host per address (istio/istio#56355)", dups))
	}
	if len(causes) == 0 {
		causes = append(causes, "the endpoint weights are uneven")
	}
	return model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemSkew, Service: host,
		Sentence: fmt.Sprintf("%s port %d: a %s proxy sends %d%% of its traffic across networks, but its endpoint counts give %d%% (%d of %d healthy endpoints are remote): %s — threshold ±%d points",
			host, port, v.Network, got, want, remoteOK, localOK+remoteOK, strings.Join(causes, "; "), threshold)}, true
}

func percent(part, total uint64) int {
	if total == 0 {
		return 0
	}
	return int((200*part/total + 1) / 2)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
