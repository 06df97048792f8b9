package collector

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/model"
)

// defaultCredentialRetest is how often a remote secret's credential is
// tried again when nothing changed (Options.CredentialRetest): a token can
// be revoked, an RBAC binding removed, a server moved without the secret
// changing.
const defaultCredentialRetest = 5 * time.Minute

// credTester keeps the test of every remote-secret key the Registry plans
// with: a key is tried when first seen, when its kubeconfig changes (the
// test is keyed by the kubeconfig's hash) and again after retest; results
// of keys no longer planned are dropped. Tests run off the Registry's
// lock, a few at a time; each finished one publishes a snapshot.
type credTester struct {
	test   func(ctx context.Context, cfg *rest.Config, ns string) model.CredentialTest
	ns     string
	retest time.Duration
	notify func()
	slots  chan struct{}
	// group counts the tests running (the Registry's loops: Run returns
	// after they have).
	group   *sync.WaitGroup
	mu      sync.Mutex
	results map[string]model.CredentialTest
	running map[string]bool
}

func newCredTester(o *Options, group *sync.WaitGroup, notify func()) *credTester {
	return &credTester{test: o.TestCredential, ns: o.SystemNamespace, retest: o.CredentialRetest, notify: notify, group: group,
		slots: make(chan struct{}, 4), results: map[string]model.CredentialTest{}, running: map[string]bool{}}
}

// testKey identifies one version of one key of one secret in one holder.
func testKey(se *secretEntry) string {
	return se.holderKey + "/" + se.Ref.Name + "/" + se.Ref.Key + "@" + hex.EncodeToString(se.Hash[:8])
}

// want starts the tests secs need (none run twice at once) and forgets
// the results of keys not among them.
func (t *credTester) want(ctx context.Context, secs []secretEntry, now time.Time) {
	keep := map[string]bool{}
	if ctx.Err() != nil {
		return // Run is ending
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range secs {
		se := secs[i]
		k := testKey(&se)
		keep[k] = true
		if r, ok := t.results[k]; t.running[k] || ok && now.Sub(r.At) < t.retest {
			continue
		}
		t.running[k] = true
		t.group.Go(func() { t.run(ctx, k, se) })
	}
	for k := range t.results {
		if !keep[k] {
			delete(t.results, k)
		}
	}
}

func (t *credTester) run(ctx context.Context, k string, se secretEntry) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		t.mu.Lock()
		delete(t.running, k)
		t.mu.Unlock()
		return
	}
	r := t.one(ctx, &se)
	<-t.slots
	t.mu.Lock()
	delete(t.running, k)
	if ctx.Err() == nil {
		t.results[k] = r
	}
	t.mu.Unlock()
	t.notify()
}

// one tests one entry now (a kubeconfig meshscope refused is not run).
func (t *credTester) one(ctx context.Context, se *secretEntry) model.CredentialTest {
	if se.Config == nil {
		why := "the kubeconfig cannot be used"
		if se.Problem.Reason != "" {
			why = se.Problem.Reason
		}
		return model.CredentialTest{At: time.Now(), Skipped: why}
	}
	return t.test(ctx, se.Config, t.ns)
}

// result is the last test of se (nil: not tried yet).
func (t *credTester) result(se *secretEntry) *model.CredentialTest {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.results[testKey(se)]; ok {
		return &r
	}
	return nil
}

// pending is the number of tests not finished.
func (t *credTester) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.running)
}

// now tests the entries that have no result yet, at once and in parallel,
// and returns every entry's result (a what-if's secrets: the answer
// waits for them). Nothing is kept: the live secrets keep theirs.
func (t *credTester) now(ctx context.Context, secs []secretEntry) []*model.CredentialTest {
	out := make([]*model.CredentialTest, len(secs))
	var wg sync.WaitGroup
	for i := range secs {
		if r := t.result(&secs[i]); r != nil {
			out[i] = r
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := t.one(ctx, &secs[i])
			out[i] = &r
		}()
	}
	wg.Wait()
	return out
}

// remoteSecrets is secs as the snapshot shows them, with their tests.
func (t *credTester) remoteSecrets(secs []secretEntry, tests []*model.CredentialTest) []model.RemoteSecret {
	out := make([]model.RemoteSecret, 0, len(secs))
	for i := range secs {
		se := &secs[i]
		rs := model.RemoteSecret{Ref: se.Ref, Credential: se.Credential, WrittenAt: se.WrittenAt}
		if tests != nil {
			rs.Test = tests[i]
		} else {
			rs.Test = t.result(se)
		}
		out = append(out, rs)
	}
	return out
}
