package fleet

import (
	"fmt"
	"strings"
	"time"
)

// The texts of a proxy's cells, as `meshscope proxies` prints them and the
// UI's :proxies view shows them: one wording for both.

// StateText is the proxy's state, with how long a STALE or NACK proxy has
// left istiod's last push unacknowledged.
func (p Proxy) StateText() string {
	s := string(p.State)
	if p.StaleFor > 0 && (p.State == Stale || p.State == Rejected) {
		s += " " + p.StaleFor.Round(time.Second).String()
	}
	return s
}

// TypeText is the state of one xDS type (CDS, LDS, EDS, RDS…), "-" when
// the proxy does not watch it.
func (p Proxy) TypeText(t string) string {
	for _, ts := range p.Types {
		if ts.Type == t {
			return string(ts.State)
		}
	}
	return "-"
}

// VersionText is the proxy's version, "/" its istiod's when both are known.
func (p Proxy) VersionText() string {
	if p.Version == "" {
		return "-"
	}
	if p.IstiodVersion != "" {
		return p.Version + " / " + p.IstiodVersion
	}
	return p.Version
}

// IdentityText says where the identity the proxy was injected with differs
// from its pod's today ("network network0≠network2"), "ok" when it does
// not, "-" when there is nothing to compare (no injected proxy).
func (p Proxy) IdentityText() string {
	if len(p.Drift) == 0 {
		if p.Pod != nil && p.Pod.Injected != nil {
			return "ok"
		}
		return "-"
	}
	l := make([]string, 0, len(p.Drift))
	for _, d := range p.Drift {
		l = append(l, fmt.Sprintf("%s %s≠%s", d.Field, QuoteEmpty(d.Injected), QuoteEmpty(d.Derived)))
	}
	return strings.Join(l, ", ")
}

// QuoteEmpty writes an empty identity field as "" (an env not set), not as nothing.
func QuoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
