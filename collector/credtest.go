package collector

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// A remote secret's credential is tried as istiod would use it, from where
// meshscope runs, read-only: reach the server, verify it with the
// kubeconfig's CA, then ask what the user may do — one
// SelfSubjectRulesReview, and a SelfSubjectAccessReview per permission of
// the istio reader role it seems to grant (readerrole.go). Reviews are
// answered and never stored: nothing is written to the cluster.

// credentialTimeout bounds one test (every step).
const credentialTimeout = 20 * time.Second

// reviewConcurrency is how many access reviews one test asks at once.
const reviewConcurrency = 8

// testCredential tries cfg; ns is the namespace the rules review is asked
// in (the system namespace: where istiod's own secrets are).
func testCredential(ctx context.Context, cfg *rest.Config, ns string, now time.Time) model.CredentialTest {
	t := model.CredentialTest{At: now}
	if cfg == nil {
		t.Skipped = "no usable kubeconfig"
		return t
	}
	ctx, cancel := context.WithTimeout(ctx, credentialTimeout)
	defer cancel()
	red := redactorForConfig(cfg)
	fail := func(err error, what string) model.CredentialTest {
		f := red.Redact(errs.Classify(err, what))
		t.Failed, t.Reason = f.Kind, f.Reason
		return t
	}
	if err := reachServer(ctx, cfg); err != nil {
		return fail(err, "the API server")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = credentialTimeout
	// A test is a short burst of tiny reviews (at most reviewConcurrency
	// at once), not a client's steady load: no client-side rate limit.
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Failed, t.Reason = model.ErrClient, red.Clean("cannot build a client: "+errs.OneLine(err.Error()))
		return t
	}
	rules, complete, err := rulesReview(ctx, client, ns)
	switch {
	case apierrors.IsUnauthorized(err):
		return fail(err, "")
	case err != nil && !apierrors.IsForbidden(err):
		return fail(err, "self-subject rules reviews")
	}
	var candidates []model.Permission
	for _, p := range readerPermissions() {
		if !complete || allows(rules, p) {
			candidates = append(candidates, p)
		} else {
			t.Missing = append(t.Missing, p) // not even in ns: nowhere
		}
	}
	denied, err := accessReviews(ctx, client, candidates)
	if err != nil {
		if apierrors.IsUnauthorized(err) {
			return fail(err, "")
		}
		t.Unchecked = red.Clean(errs.Classify(err, "self-subject access reviews").Reason)
		return t
	}
	t.Missing = append(t.Missing, denied...)
	order := readerPermissions()
	slices.SortStableFunc(t.Missing, func(a, b model.Permission) int {
		return slices.Index(order, a) - slices.Index(order, b)
	})
	return t
}

// reachServer dials the API server and, for https, completes a TLS
// handshake with the kubeconfig's own TLS settings (CA, server name,
// client certificate): the errors of the first two steps, apart. Through
// a proxy the dial is left to the client.
func reachServer(ctx context.Context, cfg *rest.Config) error {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return err
	}
	if cfg.Proxy != nil {
		return nil
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[bool]string{true: "443", false: "80"}[u.Scheme == "https"])
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return &url.Error{Op: "Get", URL: u.Scheme + "://" + u.Host, Err: err}
	}
	defer conn.Close()
	if u.Scheme != "https" {
		return nil
	}
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return err
	}
	if tc == nil {
		tc = &tls.Config{}
	}
	tc = tc.Clone()
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	return tls.Client(conn, tc).HandshakeContext(ctx)
}

// rulesReview asks what the user may do in ns; complete is false when the
// API server says its answer is incomplete (an authorizer that cannot list
// rules) or failed to evaluate some.
func rulesReview(ctx context.Context, client kubernetes.Interface, ns string) ([]authorizationv1.ResourceRule, bool, error) {
	r, err := client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, err
	}
	return r.Status.ResourceRules, !r.Status.Incomplete && r.Status.EvaluationError == "", nil
}

// allows says whether rules grant p on every object (RBAC's matching:
// "*" matches any verb, group or resource; a rule limited to resource
// names grants no list or watch of all).
func allows(rules []authorizationv1.ResourceRule, p model.Permission) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.Verbs, p.Verb) && has(r.APIGroups, p.Group) && has(r.Resources, p.Resource) {
			return true
		}
	}
	return false
}

// accessReviews asks, cluster-wide, whether the user may do each of
// perms, a few at a time, and returns those it may not. The first error
// ends it.
func accessReviews(ctx context.Context, client kubernetes.Interface, perms []model.Permission) ([]model.Permission, error) {
	allowed := make([]bool, len(perms))
	errsOf := make([]error, len(perms))
	sem := make(chan struct{}, reviewConcurrency)
	var wg sync.WaitGroup
	for i, p := range perms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Group: p.Group, Resource: p.Resource, Verb: p.Verb}},
			}, metav1.CreateOptions{})
			if err != nil {
				errsOf[i] = err
				return
			}
			allowed[i] = r.Status.Allowed
		}()
	}
	wg.Wait()
	var denied []model.Permission
	for i, p := range perms {
		if errsOf[i] != nil {
			return nil, fmt.Errorf("%s %s: %w", p.Verb, p, errsOf[i])
		}
		if !allowed[i] {
			denied = append(denied, p)
		}
	}
	return denied, nil
}
