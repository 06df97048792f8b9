package collector

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/collector/gatewaydns"
	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/collector/watch"
	"github.com/meshscope/meshscope/model"
)

// Registry knows every cluster of the mesh and publishes Snapshots of it.
// Create it with NewRegistry, start it with Run, read it with Snapshot or
// Subscribe.
type Registry struct {
	opts Options
	log  *slog.Logger
	// watchConfig is what every watcher reads of opts.
	watchConfig *watch.Config

	// reconcileMu serializes reconcile (called from Run's loop and from a
	// context cluster's first sync).
	reconcileMu sync.Mutex
	mu          sync.Mutex
	entries     []*entry
	runCtx      context.Context
	running     atomic.Bool
	parseCache  map[string]secretEntry
	// secrets are the remote-secret keys the last plan read (holders by
	// their planned IDs); tests tries their credentials.
	secrets []secretEntry
	tests   *credTester

	reconcileCh chan struct{}
	changeCh    chan struct{}
	// loops counts the goroutines Run started and every watcher's (see
	// watch.Watcher.Start): Run returns once they have ended.
	loops sync.WaitGroup

	snap    atomic.Pointer[model.Snapshot]
	version uint64 // only the builder touches it (under buildMu)
	buildMu sync.Mutex

	subMu sync.Mutex
	subs  map[chan *model.Snapshot]struct{}

	// meshFiles are the mesh config files given instead of ConfigMaps;
	// meshCache holds parsed mesh configs by text (used under buildMu).
	meshFiles *meshFiles
	meshCache map[string]model.MeshConfig

	// names resolves the gateways' DNS names (gatewaynames.go); nil
	// when nothing resolves them, namesErr then says why.
	names    *gatewaydns.Cache
	namesErr string
}

// watched is one cluster's watcher and the part of the snapshot last
// built from its caches (a Registry's cache, not the watcher's).
type watched struct {
	*watch.Watcher
	part atomic.Pointer[build.Part]
	// changed marks a what-if's shadow whose overlay changes something:
	// its part is rebuilt, never taken from the live one.
	changed bool
}

// entry is one cluster: one API server, however many ways it is reached.
type entry struct {
	// key identifies the entry across reconciles: "server:<url>" for a
	// context ("context:<name>" without a URL), "id:<id>@<url>" for a
	// cluster declared by secrets, "secret:<holder>/<ns/name>/<key>" for a
	// secret whose kubeconfig cannot be used.
	key        string
	id         string
	explicitID bool // from Options.ClusterIDs: never renamed by secrets
	source     model.SourceRef
	sources    []model.SourceRef
	server     string
	warnings   []string
	fixed      errs.Failure // an error that no retry fixes (bad kubeconfig, duplicate ID, client)
	removed    bool

	fromContext bool
	ctxSource   Source // for a context
	config      *rest.Config
	hash        [32]byte // of the remote-secret kubeconfig in use

	// idFrom says where id comes from.
	idFrom model.IDSource

	w *watched
	// swap, while the watchers are being replaced after a credentials
	// change, holds the old ones' last share of the snapshot.
	swap *pendingSwap
}

// NewRegistry resolves the sources (loading the kubeconfig unless
// opts.Sources is given). It fails on a broken kubeconfig or a missing
// context; everything that can go wrong later is a cluster state.
func NewRegistry(opts Options) (*Registry, error) {
	opts.setDefaults()
	r := &Registry{
		opts: opts,
		watchConfig: &watch.Config{SystemNamespace: opts.SystemNamespace, Revision: opts.Revision, DisableNodes: opts.DisableNodes,
			SyncTimeout: opts.SyncTimeout, HealthInterval: opts.HealthInterval, HealthTimeout: opts.HealthTimeout, Probe: opts.Probe},
		log:         opts.Logger.With("component", "collector"),
		parseCache:  map[string]secretEntry{},
		reconcileCh: make(chan struct{}, 1),
		changeCh:    make(chan struct{}, 1),
		subs:        map[chan *model.Snapshot]struct{}{},
		meshCache:   map[string]model.MeshConfig{},
	}
	r.tests = newCredTester(&r.opts, &r.loops, r.notify)
	var err error
	if r.meshFiles, err = newMeshFiles(opts.MeshConfigFiles); err != nil {
		return nil, err
	}
	r.names, r.namesErr = newNameCache(opts, r.notify)
	sources := opts.Sources
	if len(sources) == 0 {
		sources, err = loadContexts(opts.Kubeconfig, opts.Contexts, opts.AllContexts)
		if err != nil {
			return nil, err
		}
	}
	seenServer := map[string]string{}
	for _, s := range sources {
		if s.Name == "" {
			return nil, fmt.Errorf("a source has no name")
		}
		if s.Server == "" && s.Config != nil {
			s.Server = normalizeServer(s.Config.Host)
		}
		s.Server = normalizeServer(s.Server)
		if s.Client == nil && s.Config == nil {
			return nil, fmt.Errorf("source %q has neither a client nor a config", s.Name)
		}
		key := "context:" + s.Name
		if s.Server != "" {
			key = "server:" + s.Server
			if other, dup := seenServer[s.Server]; dup {
				// Two contexts for one API server: one cluster.
				r.log.Info("contexts reach the same API server; using the first", "context", s.Name, "first", other)
				continue
			}
			seenServer[s.Server] = s.Name
		}
		e := &entry{
			key:         key,
			id:          s.Name,
			source:      model.SourceRef{Kind: model.SourceContext, Name: s.Name},
			server:      s.Server,
			fromContext: true,
			ctxSource:   s,
			config:      s.Config,
		}
		if id, ok := opts.ClusterIDs[s.Name]; ok && id != "" {
			e.id, e.explicitID = id, true
		}
		e.sources = []model.SourceRef{e.source}
		r.entries = append(r.entries, e)
	}
	// A --cluster-id for a context that is not read is a typo: say so.
	for name := range opts.ClusterIDs {
		found := false
		for _, s := range sources {
			found = found || s.Name == name
		}
		if !found {
			return nil, fmt.Errorf("--cluster-id: context %q is not one of the contexts read", name)
		}
	}
	// The contexts' IDs (and duplicate IDs among them) before any cluster
	// is read; Run plans again as the clusters sync.
	r.applyLocked(planClusters(r.contextInputsLocked(func(e *entry) *watched { return e.w }), nil))
	r.publish()
	return r, nil
}

// Run starts every cluster's watchers and keeps the registry up to date
// until ctx is done. It returns nil when ctx ends, once every goroutine it
// and its watchers started has ended.
func (r *Registry) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.runCtx != nil {
		r.mu.Unlock()
		return fmt.Errorf("registry is already running")
	}
	r.runCtx = ctx
	r.running.Store(true)
	for _, e := range r.entries {
		if e.fromContext && e.fixed.Kind == "" {
			r.startLocked(e)
		}
	}
	r.mu.Unlock()
	r.notify()

	r.loops.Go(func() { r.publishLoop(ctx) })
	r.loops.Go(func() { r.meshFiles.poll(ctx, 2*time.Second, r.notify) })
	retest := time.NewTicker(r.opts.CredentialRetest)
	defer retest.Stop()
	for {
		select {
		case <-retest.C:
			r.kickReconcile() // tries the credentials whose test is old
		case <-ctx.Done():
			r.stop()
			return nil
		case <-r.reconcileCh:
			r.reconcile()
		}
	}
}

// stop ends the gateway name refreshes and every watcher, then waits for
// the goroutines outside the lock: a watcher's first sync may be waiting
// for it to plan (startLocked starts no new watcher once Run's context has
// ended).
func (r *Registry) stop() {
	if r.names != nil {
		r.names.Close()
	}
	r.mu.Lock()
	for _, e := range r.entries {
		if e.w != nil {
			e.w.Stop()
		}
	}
	r.mu.Unlock()
	r.loops.Wait()
}

// Snapshot returns the latest snapshot (never nil after NewRegistry).
func (r *Registry) Snapshot() *model.Snapshot { return r.snap.Load() }

// Subscribe returns a channel that receives every new snapshot, latest
// wins: a slow reader skips intermediate ones but always gets the newest.
// The current snapshot is sent at once. Call cancel to stop.
func (r *Registry) Subscribe() (ch <-chan *model.Snapshot, cancel func()) {
	c := make(chan *model.Snapshot, 1)
	c <- r.Snapshot()
	r.subMu.Lock()
	r.subs[c] = struct{}{}
	r.subMu.Unlock()
	return c, func() {
		r.subMu.Lock()
		delete(r.subs, c)
		r.subMu.Unlock()
	}
}

// WaitSettled blocks until every cluster is synced, timed out, in error or
// removed, and returns that snapshot; or returns ctx's error.
func (r *Registry) WaitSettled(ctx context.Context) (*model.Snapshot, error) {
	ch, cancel := r.Subscribe()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return r.Snapshot(), ctx.Err()
		case s := <-ch:
			if s.Settled() && r.running.Load() && len(r.reconcileCh) == 0 && r.tests.pending() == 0 {
				return s, nil
			}
		}
	}
}

func (r *Registry) notify() {
	select {
	case r.changeCh <- struct{}{}:
	default:
	}
}

func (r *Registry) kickReconcile() {
	select {
	case r.reconcileCh <- struct{}{}:
	default:
	}
}

// publishLoop coalesces change notifications: after a quiet period a change
// is published at once; during a burst at most once per PublishInterval.
func (r *Registry) publishLoop(ctx context.Context) {
	var last time.Time
	var took time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.changeCh:
		}
		// Under sustained churn in a big mesh a build can take longer
		// than the interval: wait at least twice the last build's time
		// so that building never takes more than a third of a core.
		interval := max(r.opts.PublishInterval, 2*took)
		if d := interval - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		// Everything that happened until now is in this build.
		select {
		case <-r.changeCh:
		default:
		}
		start := time.Now()
		r.publish()
		last = time.Now()
		took = last.Sub(start)
	}
}

// publish builds a snapshot and swaps it in, then hands it to subscribers.
func (r *Registry) publish() *model.Snapshot {
	r.buildMu.Lock()
	r.version++
	s := r.build(r.version)
	r.snap.Store(s)
	r.buildMu.Unlock()

	r.subMu.Lock()
	for c := range r.subs {
		select {
		case c <- s:
		default:
			select {
			case <-c:
			default:
			}
			select {
			case c <- s:
			default:
			}
		}
	}
	r.subMu.Unlock()
	return s
}

// startLocked builds the client and the watcher of an entry.
func (r *Registry) startLocked(e *entry) {
	if r.runCtx == nil || r.runCtx.Err() != nil || e.fixed.Kind != "" {
		return
	}
	w, f := r.newWatcher(e.id, e.config, e.ctxSource, e.fromContext, r.notify, r.kickReconcile)
	if f.Kind != "" {
		e.fixed = f
		return
	}
	// A context cluster's first sync plans at once (its remote secrets,
	// the IDs its istiod and injector use; see watch.Watcher.Start); later
	// changes go through Run's loop.
	var onSync func()
	if e.fromContext {
		onSync = r.reconcile
	}
	e.w = &watched{Watcher: w}
	e.removed = false
	w.Start(r.runCtx, &r.loops, onSync)
}

// newWatcher builds the client and the (not started) watcher of a
// cluster: from its context's client, else from cfg (a remote secret's
// kubeconfig).
func (r *Registry) newWatcher(id string, cfg *rest.Config, src Source, fromContext bool, notify, onSecrets func()) (*watch.Watcher, errs.Failure) {
	client := src.Client
	if client == nil || !fromContext {
		var err error
		client, err = r.newClient(id, cfg)
		if err != nil {
			return nil, redactorForConfig(cfg).Redact(errs.Failure{Kind: model.ErrClient, Reason: "cannot build a client: " + errs.OneLine(err.Error())})
		}
	}
	log := r.log.With("cluster", id)
	w := watch.New(client, r.watchConfig, log, redactorForConfig(cfg), fromContext && !r.opts.DisableRemoteSecrets, notify, onSecrets)
	// Istio config matters where an istiod reads it: its config cluster,
	// i.e. the context clusters; istiod reads WorkloadEntries of the other
	// clusters too (cross-cluster WorkloadEntries), and Gateway API
	// Gateways (ambient east-west gateways) of every cluster.
	dyn := src.Dynamic
	if dyn == nil && cfg != nil {
		var err error
		if dyn, err = r.opts.NewDynamicClient(id, rest.CopyConfig(cfg)); err != nil {
			log.Warn("no client for Istio config and Gateways", "err", err)
		}
	}
	if dyn != nil {
		w.AddGatewayInformer(dyn)
	}
	switch {
	case dyn == nil:
	case fromContext:
		w.AddIstioConfigInformers(dyn)
	default:
		w.AddWorkloadEntryInformer(dyn)
	}
	return w, errs.Failure{}
}

func (r *Registry) newClient(id string, cfg *rest.Config) (c kubernetes.Interface, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("client constructor panicked: %v", p)
		}
	}()
	if cfg == nil {
		return nil, fmt.Errorf("no configuration")
	}
	return r.opts.NewClient(id, rest.CopyConfig(cfg))
}

// reconcile brings the running watchers in line with what the contexts
// and their remote secrets declare: it gathers the planning inputs from
// the context clusters' caches, plans (plan.go), and applies the plan.
func (r *Registry) reconcile() {
	r.reconcileMu.Lock()
	defer r.reconcileMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.notify()
	live := func(e *entry) *watched { return e.w }
	secs, seen := r.secretInputsLocked(live, r.parseCache)
	for k := range r.parseCache {
		if !seen[k] {
			delete(r.parseCache, k)
		}
	}
	r.applyLocked(planClusters(r.contextInputsLocked(live), secs))
	r.secrets = secs // planning named each holder by its ID
	if r.runCtx != nil {
		r.tests.want(r.runCtx, secs, time.Now())
	}
}

// remoteSecrets are the remote-secret keys of the last plan, with their
// tests, for a snapshot.
func (r *Registry) remoteSecrets() []model.RemoteSecret {
	r.mu.Lock()
	secs := r.secrets
	r.mu.Unlock()
	return r.tests.remoteSecrets(secs, nil)
}

// contextInputsLocked describes the context clusters for planning: their
// flags, and the IDs their istiod pods and sidecar injector use.
func (r *Registry) contextInputsLocked(watcherOf func(*entry) *watched) []contextIn {
	var out []contextIn
	for _, e := range r.entries {
		if !e.fromContext {
			continue
		}
		c := contextIn{key: e.key, name: e.source.Name, server: e.server}
		if e.explicitID {
			c.flagID = e.id
		}
		if w := watcherOf(e); w != nil {
			c.istiodIDs = w.IstiodClusterIDs(r.opts.SystemNamespace, r.opts.Revision)
			c.injectorID = w.InjectorClusterID(r.opts.SystemNamespace, r.opts.Revision)
		}
		out = append(out, c)
	}
	return out
}

// secretInputsLocked parses every remote secret of every context cluster
// (cached by kubeconfig hash in cache), oldest first, as watcherOf reads
// them; seen are the cache keys in use.
func (r *Registry) secretInputsLocked(watcherOf func(*entry) *watched, cache map[string]secretEntry) (secs []secretEntry, seen map[string]bool) {
	seenParse := map[string]bool{}
	if !r.opts.DisableRemoteSecrets {
		for _, e := range r.entries {
			w := watcherOf(e)
			if !e.fromContext || w == nil {
				continue
			}
			for _, s := range w.RemoteSecrets() {
				for _, se := range parseRemoteSecretCached(s, e.key, r.opts.AllowInsecureKubeconfig, cache) {
					seenParse[e.key+"/"+se.Ref.Name+"/"+se.Ref.Key] = true
					se.holderKey, se.holderName = e.key, e.source.Name
					secs = append(secs, se)
				}
			}
		}
	}
	sortSecrets(secs)
	return secs, seenParse
}

// applyLocked makes the registry's entries and watchers match a plan: new
// clusters start, a changed kubeconfig (a rotated token) restarts that
// cluster's watchers make-before-break, clusters no longer declared are
// marked removed, and clusters with a problem are not watched. Context
// clusters always stay.
func (r *Registry) applyLocked(plan []plannedCluster) {
	byKey := map[string]*entry{}
	for _, e := range r.entries {
		byKey[e.key] = e
	}
	desired := map[string]bool{}
	for _, p := range plan {
		desired[p.key] = true
		e := byKey[p.key]
		if e == nil {
			e = &entry{key: p.key, server: p.server}
			r.entries = append(r.entries, e)
			byKey[p.key] = e
		}
		e.id, e.idFrom, e.source, e.sources, e.warnings = p.id, p.idFrom, p.source, p.sources, p.warnings
		switch {
		case e.fromContext:
			// A context's only planned problem is a duplicate ID.
			if p.problem.Kind != "" {
				e.fixed = p.problem
			} else if e.fixed.Kind == model.ErrDuplicateID {
				e.fixed = errs.Failure{}
			}
		default:
			e.fixed = p.problem
			if p.problem.Kind == "" && (e.config == nil || e.hash != p.hash || e.removed || e.w == nil) {
				if e.w != nil {
					r.log.Info("remote secret changed; restarting the cluster's watchers", "cluster", p.id, "secret", p.source.Name)
					r.swapLocked(e)
				}
				e.config, e.hash = p.config, p.hash
			}
		}
		if e.fixed.Kind != "" && e.w != nil {
			e.w.Stop()
			e.w = nil
		}
		e.removed = false
	}
	for _, e := range r.entries {
		if desired[e.key] {
			continue
		}
		if e.w != nil {
			e.w.Stop()
			e.w = nil
		}
		if !e.removed {
			r.log.Info("cluster removed", "cluster", e.id)
		}
		e.removed = true
	}
	for _, e := range r.entries {
		if desired[e.key] && e.w == nil && e.fixed.Kind == "" {
			r.startLocked(e)
		}
		if e.w != nil {
			e.w.MarkDirty() // IDs may have changed
		}
	}
}
