package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// The checks of each remote secret's credential (model.RemoteSecret, as
// the collector describes and tests it): will istiod load it, until when
// does it work, does its CA verify its server, does the server accept it,
// does its user hold what istio's reader role grants. One function per
// question; the fix in each sentence.

// ExpiryWarning is how long before a remote secret's credential expires
// doctor warns.
const ExpiryWarning = 7 * 24 * time.Hour

// secretOfMesh is a remote secret with the cluster it stands for.
type secretOfMesh struct {
	model.RemoteSecret
	cluster string
}

// meshSecrets are the remote secrets istiod reads: every key but one equal
// to its holder's own ID (istiod ignores those).
func meshSecrets(snap *model.Snapshot) []secretOfMesh {
	var out []secretOfMesh
	for _, rs := range snap.RemoteSecrets {
		if rs.Ref.Key == rs.Ref.In {
			continue
		}
		id := snap.ClusterOfSecret(rs.Ref)
		if id == "" {
			id = rs.Ref.Key
		}
		out = append(out, secretOfMesh{rs, id})
	}
	return out
}

// what names the secret in sentences.
func (s secretOfMesh) what() string {
	return fmt.Sprintf("remote secret %s in %s (for %s)", s.Ref.Name, s.Ref.In, s.Ref.Key)
}

// objects are what a problem of the secret concerns: the Secret.
func (s secretOfMesh) objects() []model.ObjectRef { return []model.ObjectRef{secretRef(s.Ref)} }

// recreate is the one-line fix that writes a new secret.
func (s secretOfMesh) recreate() string {
	return fmt.Sprintf("istioctl create-remote-secret --context=CONTEXT-OF-%s --name=%s | kubectl apply --context=CONTEXT-OF-%s -f -", s.Ref.Key, s.Ref.Key, s.Ref.In)
}

// credentialProblems: what each secret's description and test say.
func credentialProblems(snap *model.Snapshot, now time.Time) []model.Problem {
	var ps []model.Problem
	for _, s := range meshSecrets(snap) {
		ps = append(ps, refusedProblems(snap, s)...)
		ps = append(ps, expiryProblems(s, now)...)
		ps = append(ps, testProblems(s)...)
	}
	return ps
}

// refusedProblems: a kubeconfig istiod cannot or will not load (istio
// pkg/kube/util.go NewUntrustedRestConfig: it must load and validate, and
// sanitizeKubeConfig refuses what PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS
// does not allow). istiod logs it once and never registers the cluster.
func refusedProblems(snap *model.Snapshot, s secretOfMesh) []model.Problem {
	p := model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretRefused, Cluster: s.cluster, Objects: s.objects()}
	if s.Credential.Invalid != "" {
		p.Sentence = fmt.Sprintf("istiod %s cannot load the kubeconfig of %s: %s; istiod logs it once and never registers %s (no retry) — recreate it: %s",
			s.Ref.In, s.what(), s.Credential.Invalid, s.Ref.Key, s.recreate())
		return []model.Problem{p}
	}
	allowed := allowedOptions(snap, s.Ref.In)
	var refused, why []string
	for _, o := range s.Credential.NeedsOptions {
		if !slices.Contains(allowed, o) {
			refused = append(refused, o)
			why = append(why, optionText(o, s.Credential))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	p.Sentence = fmt.Sprintf("istiod %s refuses the kubeconfig of %s: it uses %s, which istiod loads only with %s=%s (a remote secret could then make istiod run programs or read its files; istio#61773 asks for a safer EKS option) and never registers %s otherwise — use a service-account token (%s), or set that option on istiod",
		s.Ref.In, s.what(), strings.Join(why, " and "), model.EnvInsecureKubeconfigOptions, strings.Join(refused, ","), s.Ref.Key, s.recreate())
	return []model.Problem{p}
}

// allowedOptions are the kubeconfig options the istiod of cluster allows
// (its pods' PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS; none known:
// istiod's default, none).
func allowedOptions(snap *model.Snapshot, cluster string) []string {
	var out []string
	if c := snap.ClusterByID(cluster); c != nil {
		for _, p := range c.Istiods {
			for _, o := range strings.Split(p.KubeconfigOptions, ",") {
				if o = strings.TrimSpace(o); o != "" && !slices.Contains(out, o) {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

// optionText says what an option stands for in a kubeconfig.
func optionText(o string, c model.Credential) string {
	switch o {
	case "exec":
		return "an exec plugin (" + orText(c.Plugin, "a program") + ")"
	case "tokenFile":
		return "a token file"
	case "clientCertificate":
		return "a client certificate file"
	case "clientKey":
		return "a client key file"
	}
	return "the " + o + " auth provider"
}

// expiryProblems: a credential that has expired (error) or expires within
// ExpiryWarning (warning, with the date).
func expiryProblems(s secretOfMesh, now time.Time) []model.Problem {
	c := s.Credential
	if c.Expires.IsZero() || !c.ExpiresWithin(now, ExpiryWarning) {
		return nil
	}
	when := c.Expires.UTC().Format("2006-01-02 15:04 UTC")
	kind := strings.ReplaceAll(string(c.Auth), "-", " ")
	if c.Auth == model.AuthClientCert {
		kind = "client certificate"
	}
	if !c.Expires.After(now) {
		return []model.Problem{{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretExpiry, Cluster: s.cluster, Objects: s.objects(),
			Sentence: fmt.Sprintf("the %s of %s expired on %s: the API server refuses it, so istiod %s can no longer read %s (its watches fail as they reconnect) — issue a new one: %s",
				kind, s.what(), when, s.Ref.In, s.Ref.Key, s.recreate())}}
	}
	return []model.Problem{{Severity: model.SeverityWarning, Kind: model.ProblemRemoteSecretExpiry, Cluster: s.cluster, Objects: s.objects(),
		Sentence: fmt.Sprintf("the %s of %s expires on %s (in %s): from then on istiod %s can no longer read %s — rotate it before: %s",
			kind, s.what(), when, model.ShortDuration(c.Expires.Sub(now)), s.Ref.In, s.Ref.Key, s.recreate())}}
}

// testProblems: what trying the credential found — TLS, the server
// refusing it, the server out of reach, the reader role's permissions.
func testProblems(s secretOfMesh) []model.Problem {
	var ps []model.Problem
	if s.Credential.Insecure {
		ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemRemoteSecretTLS, Cluster: s.cluster, Objects: s.objects(),
			Sentence: fmt.Sprintf("%s skips TLS verification (insecure-skip-tls-verify): istiod %s trusts whatever answers at %s — put the API server's CA in certificate-authority-data: %s",
				s.what(), s.Ref.In, s.Credential.Server, s.recreate())})
	}
	t := s.Test
	if t == nil || t.Skipped != "" {
		return ps
	}
	p := model.Problem{Severity: model.SeverityError, Cluster: s.cluster, Objects: s.objects()}
	switch t.Failed {
	case "":
		return append(ps, missingPermissionProblems(s)...)
	case model.ErrTLS:
		p.Kind = model.ProblemRemoteSecretTLS
		p.Sentence = fmt.Sprintf("the CA of %s does not verify its API server %s (%s): istiod %s cannot sync %s — recreate the secret with that server's CA (istioctl create-remote-secret takes the context's certificate-authority-data), or set --tls-server-name to a name the server's certificate holds",
			s.what(), s.Credential.Server, t.Reason, s.Ref.In, s.Ref.Key)
	case model.ErrUnauthorized:
		if s.Credential.ExpiresWithin(t.At, 0) {
			return ps // expiryProblems said it
		}
		p.Kind = model.ProblemRemoteSecretUnauthorized
		p.Sentence = fmt.Sprintf("the API server %s refuses the credential of %s (%s): a revoked or deleted service-account token, or another cluster's — istiod %s cannot read %s; issue a new one: %s",
			s.Credential.Server, s.what(), t.Reason, s.Ref.In, s.Ref.Key, s.recreate())
	default:
		p.Severity, p.Kind = model.SeverityWarning, model.ProblemRemoteSecretUnreachable
		p.Sentence = fmt.Sprintf("meshscope cannot try the credential of %s from here: %s — istiod %s runs elsewhere and may reach %s (its /debug/clusterz says); check from istiod's network",
			s.what(), t.Reason, s.Ref.In, s.Credential.Server)
	}
	return append(ps, p)
}

// missingPermissionProblems: what the credential's user may not do of
// what istio's reader role grants. Without services, endpoint slices,
// pods, nodes or namespaces istiod never syncs the cluster (an error);
// the rest it reads for features (a warning).
func missingPermissionProblems(s secretOfMesh) []model.Problem {
	t := s.Test
	if t.Unchecked != "" {
		return []model.Problem{{Severity: model.SeverityWarning, Kind: model.ProblemRemoteSecretRBAC, Cluster: s.cluster, Objects: s.objects(),
			Sentence: fmt.Sprintf("meshscope cannot check what the user of %s may read: %s", s.what(), t.Unchecked)}}
	}
	if len(t.Missing) == 0 {
		return nil
	}
	var order []string
	verbs := map[string][]string{}
	sev := model.SeverityWarning
	for _, p := range t.Missing {
		k := p.String()
		if verbs[k] == nil {
			order = append(order, k)
		}
		verbs[k] = append(verbs[k], p.Verb)
		if p.Group == "" && slices.Contains(istiodNeeds, p.Resource) || p.Group == "discovery.k8s.io" && p.Resource == "endpointslices" {
			sev = model.SeverityError
		}
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k + " (" + strings.Join(verbs[k], ", ") + ")"
	}
	who := ""
	if sa := model.SubjectAccount(s.Credential.Subject); sa != "" {
		who = ", service account " + sa
	}
	effect := fmt.Sprintf("istiod %s reads %s without them (features that need them break)", s.Ref.In, s.Ref.Key)
	if sev == model.SeverityError {
		effect = fmt.Sprintf("istiod %s never syncs %s (it times out after PILOT_REMOTE_CLUSTER_TIMEOUT and works without them)", s.Ref.In, s.Ref.Key)
	}
	return []model.Problem{{Severity: sev, Kind: model.ProblemRemoteSecretRBAC, Cluster: s.cluster, Objects: s.objects(),
		Sentence: fmt.Sprintf("the user of %s%s may not: %s — istio's reader role grants them; %s — bind the user to the istio-reader ClusterRole, or recreate the secret: %s",
			s.what(), who, strings.Join(parts, "; "), effect, s.recreate())}}
}
