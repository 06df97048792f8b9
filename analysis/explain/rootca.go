package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// rootExpiryWarning is how close to its expiry a root is worth a warning.
const rootExpiryWarning = 30 * 24 * time.Hour

// rootCAProblems compares the root bundle each cluster's istiod publishes
// (ConfigMap istio-ca-root-cert): clusters whose bundles share no root
// cannot verify each other's workload certificates, so mTLS between them
// fails (istio/istio#40891, #45010: "TLS error 33554536"). Roots that
// expire within 30 days are a warning, expired ones an error.
func rootCAProblems(snap *model.Snapshot, now time.Time) []model.Problem {
	var ps []model.Problem
	type class struct {
		certs    []model.RootCert
		clusters []string
	}
	var classes []*class
	byKey := map[string]*class{}
	type expiring struct {
		cert     model.RootCert
		clusters []string
	}
	byFP := map[string]*expiring{}
	var fps []string
	for _, c := range snap.Clusters {
		if c.State == model.StateRemoved {
			continue
		}
		if c.RootCertError != "" {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemRootCA, Cluster: c.ID,
				Sentence: fmt.Sprintf("cluster %s: the root bundle its istiod publishes cannot be read: %s — meshscope cannot compare its root CA with the other clusters'", c.ID, c.RootCertError)})
		}
		if len(c.RootCerts) == 0 {
			continue
		}
		keys := make([]string, len(c.RootCerts))
		for i, rc := range c.RootCerts {
			keys[i] = rc.Fingerprint
			e := byFP[rc.Fingerprint]
			if e == nil {
				e = &expiring{cert: rc}
				byFP[rc.Fingerprint] = e
				fps = append(fps, rc.Fingerprint)
			}
			e.clusters = append(e.clusters, c.ID)
		}
		sort.Strings(keys)
		k := strings.Join(keys, ",")
		cl := byKey[k]
		if cl == nil {
			cl = &class{certs: c.RootCerts}
			byKey[k] = cl
			classes = append(classes, cl)
		}
		cl.clusters = append(cl.clusters, c.ID)
	}
	for i, a := range classes {
		for _, b := range classes[i+1:] {
			if model.SharesRoot(a.certs, b.certs) {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRootCAMismatch, Cluster: b.clusters[0],
				Sentence: fmt.Sprintf("%s trust%s %s, but %s trust%s %s: the bundles share no root, so workloads in one cannot verify the other's certificates and mTLS between them fails (TLS error 33554536, CERTIFICATE_VERIFY_FAILED) — give every cluster's istiod certificates from one shared root (plug-in CA: secret cacerts in %s)",
					clusterList(a.clusters), verbS(a.clusters), describeRoots(a.certs), clusterList(b.clusters), verbS(b.clusters), describeRoots(b.certs), "istio-system")})
		}
	}
	for _, fp := range fps {
		e := byFP[fp]
		left := e.cert.NotAfter.Sub(now)
		switch {
		case left <= 0:
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRootCAExpiry, Cluster: e.clusters[0],
				Sentence: fmt.Sprintf("root CA %s, published in %s, expired on %s: no workload certificate it signed verifies — rotate the root (plug-in CA or istiod's self-signed root) now",
					describeRoot(e.cert), strings.Join(e.clusters, ", "), e.cert.NotAfter.Format("2006-01-02"))})
		case left < rootExpiryWarning:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemRootCAExpiry, Cluster: e.clusters[0],
				Sentence: fmt.Sprintf("root CA %s, published in %s, expires on %s (in %d days): rotate it before then, or mTLS fails everywhere it is the only root",
					describeRoot(e.cert), strings.Join(e.clusters, ", "), e.cert.NotAfter.Format("2006-01-02"), int(left.Hours()/24))})
		}
	}
	return ps
}

func describeRoots(certs []model.RootCert) string {
	parts := make([]string, len(certs))
	for i, c := range certs {
		parts[i] = describeRoot(c)
	}
	if len(parts) == 1 {
		return "root " + parts[0]
	}
	return "roots " + strings.Join(parts, " and ")
}

func describeRoot(c model.RootCert) string {
	return fmt.Sprintf("%q (sha256 %s…, expires %s)", c.Subject, c.ShortFingerprint(), c.NotAfter.Format("2006-01-02"))
}

func clusterList(ids []string) string {
	if len(ids) == 1 {
		return "cluster " + ids[0]
	}
	return "clusters " + strings.Join(ids, ", ")
}

// verbS is the verb ending for a subject of len(ids) clusters.
func verbS(ids []string) string {
	if len(ids) == 1 {
		return "s"
	}
	return ""
}
