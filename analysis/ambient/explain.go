package ambient

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/xdsclient"
)

// Pending is the verdict while meshscope holds no WDS from the control
// plane yet: the explanation is the prediction alone.
const Pending Verdict = "pending"

// Explanation is one control plane's WDS for one service next to the
// prediction: what the terminal UI's ztunnel columns, `explain` and
// `doctor` show. Every workload predicted carries its reason; Actual is
// what the impersonated ztunnel holds (nil while there is none).
type Explanation struct {
	ControlPlane string `json:"controlPlane"`
	// Network is istiod's own network: the view is the same for every
	// ztunnel of this istiod, whatever network the ztunnel is in.
	Network    string                    `json:"network"`
	Verdict    Verdict                   `json:"verdict"`
	Prediction Prediction                `json:"prediction"`
	Actual     *xdsclient.WDSServiceView `json:"actual,omitempty"`
	// Differences between Actual and Prediction (see Compare).
	Differences []Difference `json:"differences,omitempty"`
	// Error says why there is no Actual ("" when there is one).
	Error string `json:"error,omitempty"`
}

// PerIstiodNote says plainly what an ambient view is and is not: WDS does
// not depend on the client's network, so there is one view per istiod,
// not one per network of ztunnels.
func PerIstiodNote(controlPlane, network string) string {
	return fmt.Sprintf("WDS is per istiod, not per client: every ztunnel connected to %s's istiod gets this view, drawn around istiod's network %s, whatever network the ztunnel is in",
		controlPlane, orNone(network))
}

// Explain predicts the service with that hostname for the istiod of v and
// holds it against actual (nil: pending, with why as the error).
func Explain(v *View, hostname string, actual *xdsclient.WDSServiceView, why string) Explanation {
	p := v.Predict(hostname)
	e := Explanation{ControlPlane: v.ControlPlane, Network: v.Network, Prediction: p, Actual: actual, Verdict: Pending}
	if actual == nil {
		e.Error = why
		if e.Error == "" {
			e.Error = "no WDS received yet"
		}
		return e
	}
	c := Compare(p, *actual)
	e.Verdict, e.Differences = c.Verdict, c.Differences
	return e
}

// ServiceKey is the WDS resource name of a service: "namespace/hostname".
func ServiceKey(namespace, hostname string) string { return namespace + "/" + hostname }

// Reach is where a workload istiod sent is reached: its IPs, or for a
// split-horizon workload "via GATEWAY" ("" for neither).
func Reach(w xdsclient.WDSWorkload) string {
	if len(w.Addresses) == 0 && w.NetworkGateway != nil {
		return "via " + w.NetworkGateway.String()
	}
	return strings.Join(w.Addresses, ",")
}

// Reach is where a predicted workload is reached, as Reach says it.
func (w Workload) Reach() string {
	if w.Gateway != "" {
		return "via " + w.Gateway
	}
	return strings.Join(w.Addresses, ",")
}
