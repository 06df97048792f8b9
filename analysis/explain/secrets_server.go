package explain

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// serverForm says why an API server address cannot be reached from
// istiod's cluster by its form alone ("" when nothing in its form says
// so): a kubeconfig made on a laptop names the server as the laptop
// reaches it. kind's `kind get kubeconfig` gives https://127.0.0.1:PORT
// (its --internal form, https://NAME-control-plane:6443, is reachable
// from other kind clusters and not flagged); minikube and Docker Desktop
// have names that resolve inside their own VM or containers only.
func serverForm(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip := net.ParseIP(host); ip != nil {
		switch {
		case ip.IsLoopback():
			return "a loopback address (" + host + "): from istiod's pod it is istiod's own pod, not that cluster's API server (a kind cluster's kubeconfig names 127.0.0.1:PORT; kind get kubeconfig --internal gives the address other clusters reach)"
		case ip.IsUnspecified():
			return "the unspecified address " + host + ": no host can be reached at it"
		}
		return ""
	}
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return "localhost: from istiod's pod it is istiod's own pod, not that cluster's API server"
	case host == "kubernetes" || host == "kubernetes.default" || host == "kubernetes.default.svc" || host == model.FQDN("kubernetes", "default"):
		return "the in-cluster name of an API server (" + host + "): in istiod's cluster it names istiod's own API server, not the remote one"
	case strings.HasSuffix(host, ".minikube.internal") || host == "minikube":
		return "a minikube name (" + host + ") that resolves only inside minikube's own machine"
	case host == "host.docker.internal" || host == "gateway.docker.internal":
		return "Docker Desktop's name for the host (" + host + "), which resolves only in containers of that machine"
	}
	return ""
}

// secretServerProblems: a remote secret whose server address istiod's
// cluster cannot reach by its form, unless istiod's own view shows the
// cluster synced through that secret (an istiod that runs outside its
// cluster, as the lab's, reaches 127.0.0.1 fine).
func secretServerProblems(snap *model.Snapshot, views []model.IstiodView, now time.Time) []model.Problem {
	var ps []model.Problem
	for _, s := range meshSecrets(snap) {
		form := serverForm(s.Credential.Server)
		if form == "" || failsOtherwise(snap, s, now) {
			continue
		}
		status := "is not read"
		if v := holderView(views, s.Ref.In); v != nil {
			status = fmt.Sprintf("does not list %s", s.Ref.Key)
			c := v.ClusterFromSecret(s.Ref.Key, s.Ref.Name)
			if syncingStill(c, s, now) {
				continue
			}
			if c != nil {
				status = fmt.Sprintf("shows %s %q", s.Ref.Key, c.SyncStatus)
			}
		} else {
			status = "was not read, so meshscope cannot tell whether istiod reaches it"
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretServer, Cluster: s.cluster, Objects: s.objects(),
			Sentence: fmt.Sprintf("%s names the API server %s, %s; istiod %s's /debug/clusterz %s — recreate the secret with an address istiod's cluster reaches: istioctl create-remote-secret --server=https://ADDRESS:PORT --name=%s",
				s.what(), s.Credential.Server, form, s.Ref.In, status, s.Ref.Key)})
	}
	return ps
}

// failsOtherwise says whether a secret fails for a reason other than its
// address — istiod refuses it, it expired, the server refuses it or its
// CA does not verify it — which its own problem says: istiod not syncing
// it then tells nothing of the address.
func failsOtherwise(snap *model.Snapshot, s secretOfMesh, now time.Time) bool {
	t := s.Test
	return len(refusedProblems(snap, s)) > 0 || s.Credential.ExpiresWithin(now, 0) ||
		t != nil && (t.Failed == model.ErrUnauthorized || t.Failed == model.ErrTLS)
}

// syncGrace is how long after a remote secret is written istiod may still
// be loading it (its PILOT_REMOTE_CLUSTER_TIMEOUT is 30s): a cluster it
// does not list yet, or still syncs, is not held against it before.
const syncGrace = time.Minute

// syncingStill says whether istiod's row of a secret's cluster (nil: not
// listed) is no finding yet: synced, or on its way within syncGrace of the
// write.
func syncingStill(row *model.IstiodCluster, s secretOfMesh, now time.Time) bool {
	if row != nil && row.SyncStatus == "synced" {
		return true
	}
	return (row == nil || row.SyncStatus == "syncing") && now.Sub(s.WrittenAt) < syncGrace
}

// holderView is the view of the istiod of the cluster holding a secret
// (the primary's own revision reads it: its view's ControlPlane is the
// cluster ID), nil when not read.
func holderView(views []model.IstiodView, cluster string) *model.IstiodView {
	for i := range views {
		if views[i].ControlPlane == cluster {
			return &views[i]
		}
	}
	return nil
}
