package collector

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// A what-if that puts a remote secret does not assume its credential
// works: each new or changed key is tried (credtest.go, read-only), and a
// cluster it adds is read through it — a watcher of its own, started for
// the what-if and stopped after — so that the mesh after holds its real
// objects, or the cluster in error with why it cannot work. Both happen
// before the snapshots are built (a test or a first sync takes seconds,
// and the live registry keeps publishing meanwhile).

// whatIfSecrets are a what-if's remote secrets, tried.
type whatIfSecrets struct {
	// tests are the tests of keys the changes add or change, by testKey.
	tests map[string]*model.CredentialTest
	// readers are watchers of the clusters the changes add, by planned
	// key ("id:ID@server"), synced (or given up on).
	readers map[string]*watched
	// group counts the readers' goroutines.
	group sync.WaitGroup
}

// stop ends the readers, and returns once their goroutines have.
func (ws *whatIfSecrets) stop() {
	for _, w := range ws.readers {
		w.Stop()
	}
	ws.group.Wait()
}

// remoteSecretOf reads a change as a remote secret of its cluster (ok
// false when it is none: deleted, not a Secret, not labelled, another
// namespace), through the secrets informer's transform (stringData
// folded into data).
func (r *Registry) remoteSecretOf(ch Change) (*corev1.Secret, bool) {
	u := ch.Object
	if ch.Delete || u.GetKind() != "Secret" || u.GetNamespace() != r.opts.SystemNamespace || u.GetLabels()[model.MultiClusterSecretLabel] != "true" {
		return nil, false
	}
	s := &corev1.Secret{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.DeepCopy().Object, s); err != nil {
		return nil, false
	}
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
	return s, true
}

// tryWhatIfSecrets tries the keys of the remote secrets among changes that
// the live registry has no test for, and starts a reader for each cluster
// they add whose test did not fail (an API server no cluster of the mesh
// has).
func (r *Registry) tryWhatIfSecrets(ctx context.Context, changes []Change) *whatIfSecrets {
	ws := &whatIfSecrets{tests: map[string]*model.CredentialTest{}, readers: map[string]*watched{}}
	holders, servers := map[string]string{}, map[string]bool{}
	r.mu.Lock()
	for _, e := range r.entries {
		if e.fromContext {
			holders[e.id] = e.key
		}
		if !e.removed && e.server != "" {
			servers[e.server] = true
		}
	}
	r.mu.Unlock()
	var secs []secretEntry
	for _, ch := range changes {
		s, ok := r.remoteSecretOf(ch)
		hk, held := holders[ch.Cluster]
		if !ok || !held {
			continue
		}
		for _, se := range parseRemoteSecret(s, hk, r.opts.AllowInsecureKubeconfig) {
			se.holderKey = hk
			if r.tests.result(&se) == nil && se.ID != ch.Cluster {
				secs = append(secs, se)
			}
		}
	}
	for i, t := range r.tests.now(ctx, secs) {
		se := &secs[i]
		ws.tests[testKey(se)] = t
		key := "id:" + se.ID + "@" + se.Server
		if t.Failed != "" || se.Config == nil || servers[se.Server] || ws.readers[key] != nil {
			continue
		}
		if w := r.readThrough(ctx, se, &ws.group); w != nil {
			ws.readers[key] = w
		}
	}
	return ws
}

// readThrough starts a watcher of the cluster se declares, with se's
// kubeconfig, and waits until it has synced or given up (its sync
// timeout); nil when no client can be built.
func (r *Registry) readThrough(ctx context.Context, se *secretEntry, group *sync.WaitGroup) *watched {
	w, f := r.newWatcher(se.ID, se.Config, Source{}, false, func() {}, func() {})
	if f.Kind != "" {
		return nil
	}
	w.Start(ctx, group, nil)
	deadline := time.Now().Add(r.opts.SyncTimeout + 2*time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var c model.Cluster
		w.Status(&c)
		if c.State == model.StateSynced || c.State == model.StateTimeout || c.State == model.StateError {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &watched{Watcher: w}
}

// addedCluster is a cluster a what-if's plan adds: read through its
// secret (an item with the reader's caches), or a share in error saying
// why it cannot work; note says which.
func (ws *whatIfSecrets) addedCluster(p plannedCluster, test *model.CredentialTest) (*item, build.Share, string) {
	c := model.Cluster{ID: p.id, IDFrom: p.idFrom, Source: p.source, Sources: p.sources, Server: p.server, Warnings: p.warnings, State: model.StateConnecting}
	if len(c.Sources) <= 1 {
		c.Sources = nil
	}
	switch {
	case p.problem.Kind != "":
		c.State, c.ErrorKind, c.Reason = model.StateError, p.problem.Kind, p.problem.Reason
		return nil, build.Share{Key: p.key, Cluster: c}, ""
	case test != nil && test.Failed != "":
		c.State, c.ErrorKind, c.Reason = model.StateError, test.Failed, test.Reason
		return nil, build.Share{Key: p.key, Cluster: c}, fmt.Sprintf("%s adds cluster %s, which cannot work: its credential, tried from here, fails (%s)", sourceText(p.source), p.id, test.Reason)
	}
	if w := ws.readers[p.key]; w != nil {
		e := entry{key: p.key, id: p.id, idFrom: p.idFrom, source: p.source, sources: p.sources, server: p.server, warnings: p.warnings, config: p.config, hash: p.hash}
		return &item{e: e, ptr: &e, w: w}, build.Share{}, fmt.Sprintf("%s adds cluster %s: read through that secret's credential (tried from here), the what-if holds its objects", sourceText(p.source), p.id)
	}
	return nil, build.Share{Key: p.key, Cluster: c}, fmt.Sprintf("%s adds cluster %s, which meshscope does not watch now: its objects are unknown, so the what-if holds none of its endpoints", sourceText(p.source), p.id)
}

// newCredentialsNote says what a changed kubeconfig of a watched cluster
// would do, from its test: the cluster fails with it (fixed set), or it
// works and the what-if reads the current objects.
func newCredentialsNote(it *item, p plannedCluster, test *model.CredentialTest) string {
	if test != nil && test.Failed != "" {
		it.e.fixed = errs.Failure{Kind: test.Failed, Reason: "its new credentials fail: " + test.Reason}
		return fmt.Sprintf("cluster %s gets new credentials from %s that fail, tried from here (%s): istiod would lose it", p.id, sourceText(p.source), test.Reason)
	}
	tried := "tried from here: they work"
	if test == nil || test.Skipped != "" {
		tried = "not tried"
	}
	return fmt.Sprintf("cluster %s gets new credentials from %s (%s): the what-if reads its current objects", p.id, sourceText(p.source), tried)
}

// testOf is the test of se: the what-if's own, else the live one.
func (r *Registry) testOf(ws *whatIfSecrets, se *secretEntry) *model.CredentialTest {
	if t := ws.tests[testKey(se)]; t != nil {
		return t
	}
	return r.tests.result(se)
}
