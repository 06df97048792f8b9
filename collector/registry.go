package collector

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Registry knows every cluster of the mesh and publishes Snapshots of it.
// Create it with NewRegistry, start it with Run, read it with Snapshot or
// Subscribe.
type Registry struct {
	opts Options
	log  *slog.Logger

	// reconcileMu serializes reconcile (called from Run's loop and from a
	// context cluster's first sync).
	reconcileMu sync.Mutex
	mu          sync.Mutex
	entries     []*entry
	runCtx      context.Context
	running     atomic.Bool
	parseCache  map[string]secretEntry

	reconcileCh chan struct{}
	changeCh    chan struct{}

	snap    atomic.Pointer[Snapshot]
	version uint64 // only the builder touches it (under buildMu)
	buildMu sync.Mutex

	subMu sync.Mutex
	subs  map[chan *Snapshot]struct{}

	// meshFiles are the mesh config files given instead of ConfigMaps;
	// meshCache holds parsed mesh configs by text (used under buildMu).
	meshFiles *meshFiles
	meshCache map[string]MeshConfig
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
	source     SourceRef
	sources    []SourceRef
	server     string
	warnings   []string
	fixed      Problem // an error that no retry fixes (bad kubeconfig, duplicate ID, client)
	removed    bool

	fromContext bool
	ctxSource   Source // for a context
	config      *rest.Config
	hash        [32]byte // of the remote-secret kubeconfig in use

	w *watcher
	// prevPart is the last snapshot share of watchers replaced after a
	// credentials change, shown until the new ones have synced.
	prevPart *clusterPart
}

// NewRegistry resolves the sources (loading the kubeconfig unless
// opts.Sources is given). It fails on a broken kubeconfig or a missing
// context; everything that can go wrong later is a cluster state.
func NewRegistry(opts Options) (*Registry, error) {
	opts.setDefaults()
	r := &Registry{
		opts:        opts,
		log:         opts.Logger.With("component", "collector"),
		parseCache:  map[string]secretEntry{},
		reconcileCh: make(chan struct{}, 1),
		changeCh:    make(chan struct{}, 1),
		subs:        map[chan *Snapshot]struct{}{},
		meshCache:   map[string]MeshConfig{},
	}
	var err error
	if r.meshFiles, err = newMeshFiles(opts.MeshConfigFiles); err != nil {
		return nil, err
	}
	sources := opts.Sources
	if len(sources) == 0 {
		sources, err = LoadContexts(opts.Kubeconfig, opts.Contexts, opts.AllContexts)
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
			source:      SourceRef{Kind: SourceContext, Name: s.Name},
			server:      s.Server,
			fromContext: true,
			ctxSource:   s,
			config:      s.Config,
		}
		if id, ok := opts.ClusterIDs[s.Name]; ok && id != "" {
			e.id, e.explicitID = id, true
		}
		e.sources = []SourceRef{e.source}
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
	r.checkDuplicateIDs()
	r.publish()
	return r, nil
}

// Run starts every cluster's watchers and keeps the registry up to date
// until ctx is done. It returns nil when ctx ends.
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

	go r.publishLoop(ctx)
	go r.meshFiles.poll(ctx, 2*time.Second, r.notify)
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			for _, e := range r.entries {
				if e.w != nil {
					e.w.stop()
				}
			}
			r.mu.Unlock()
			return nil
		case <-r.reconcileCh:
			r.reconcile()
		}
	}
}

// Snapshot returns the latest snapshot (never nil after NewRegistry).
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Subscribe returns a channel that receives every new snapshot, latest
// wins: a slow reader skips intermediate ones but always gets the newest.
// The current snapshot is sent at once. Call cancel to stop.
func (r *Registry) Subscribe() (ch <-chan *Snapshot, cancel func()) {
	c := make(chan *Snapshot, 1)
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
func (r *Registry) WaitSettled(ctx context.Context) (*Snapshot, error) {
	ch, cancel := r.Subscribe()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return r.Snapshot(), ctx.Err()
		case s := <-ch:
			if s.Settled() && r.running.Load() && len(r.reconcileCh) == 0 {
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
func (r *Registry) publish() *Snapshot {
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
	if r.runCtx == nil || e.fixed.Kind != "" {
		return
	}
	client := e.ctxSource.Client
	if client == nil || !e.fromContext {
		var err error
		client, err = r.newClient(e.id, e.config)
		if err != nil {
			e.fixed = redactorForConfig(e.config).problem(Problem{ErrClient, "cannot build a client: " + oneLine(err.Error())})
			return
		}
	}
	log := r.log.With("cluster", e.id)
	w := newWatcher(client, &r.opts, log, redactorForConfig(e.config), e.fromContext && !r.opts.DisableRemoteSecrets, r.notify, r.kickReconcile)
	// Istio config (mTLS settings) matters only where an istiod reads it:
	// its config cluster, i.e. the context clusters. Gateway API Gateways
	// (ambient east-west gateways) matter in every cluster.
	dyn := e.ctxSource.Dynamic
	if dyn == nil && e.config != nil {
		var err error
		if dyn, err = r.opts.NewDynamicClient(e.id, rest.CopyConfig(e.config)); err != nil {
			log.Warn("no client for Istio config and Gateways", "err", err)
		}
	}
	if dyn != nil {
		if e.fromContext {
			w.addPolicyInformers(dyn)
		}
		w.addGatewayInformer(dyn)
	}
	// A context cluster's first sync reconciles its remote secrets at once
	// (see watcher.trackSync); later secret events go through Run's loop.
	if w.secrets != nil {
		w.onSecretsSyncHook = r.reconcile
	}
	e.w = w
	e.removed = false
	w.start(r.runCtx)
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

// reconcile recomputes the clusters declared by remote secrets and brings
// the running watchers in line: new clusters start, changed kubeconfigs
// (a rotated token) restart that cluster's watchers, deleted ones are
// marked removed. Context clusters always stay.
func (r *Registry) reconcile() {
	r.reconcileMu.Lock()
	defer r.reconcileMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.notify()

	// Every secret entry from every context cluster, oldest first.
	var secs []secretEntry
	seenParse := map[string]bool{}
	if !r.opts.DisableRemoteSecrets {
		for _, e := range r.entries {
			if !e.fromContext || e.w == nil || e.w.secrets == nil {
				continue
			}
			for _, obj := range e.w.secrets.inf.GetStore().List() {
				s, ok := obj.(*corev1.Secret)
				if !ok || s.Namespace != r.opts.SystemNamespace || s.Labels[MultiClusterSecretLabel] != "true" {
					continue
				}
				for _, se := range parseRemoteSecretCached(s, e.key, r.opts.AllowInsecureKubeconfig, r.parseCache) {
					seenParse[e.key+"/"+se.Ref.Name+"/"+se.Ref.Key] = true
					se.holder = e
					secs = append(secs, se)
				}
			}
		}
	}
	for k := range r.parseCache {
		if !seenParse[k] {
			delete(r.parseCache, k)
		}
	}
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].Order < secs[j].Order })

	byKey := map[string]*entry{}
	for _, e := range r.entries {
		byKey[e.key] = e
	}
	desired := map[string]bool{}
	// Contexts are always there; reset what secrets add to them.
	ctxIDFromSecret := map[string]bool{}
	for _, e := range r.entries {
		e.warnings = nil
		if e.fromContext {
			desired[e.key] = true
			e.sources = []SourceRef{e.source}
			if !e.explicitID {
				e.id = e.source.Name
			}
		}
	}
	// Pass 1: a context without an explicit ID takes the ID the other
	// clusters' remote secrets use for its server.
	for _, se := range secs {
		if se.Problem.Kind != "" {
			continue
		}
		if e := byKey["server:"+se.Server]; e != nil && e.fromContext && !e.explicitID && !ctxIDFromSecret[e.key] {
			e.id = se.ID
			ctxIDFromSecret[e.key] = true
		}
	}
	// Secrets name their holder by its (possibly just changed) ID.
	for i := range secs {
		secs[i].Ref.In = secs[i].holder.id
	}
	holderServer := map[string]string{}
	for _, e := range r.entries {
		if e.fromContext {
			holderServer[e.id] = e.server
		}
	}
	// Pass 2: one entry per (cluster ID, API server). A secret whose server
	// a context reaches is that context's cluster. Secrets with the
	// same ID and server (the same remote cluster registered in several
	// primaries) are one cluster. Two IDs for one
	// server stay two clusters, as istiod sees them (with a warning).
	ctxByServer := map[string]*entry{}
	for _, e := range r.entries {
		if e.fromContext && e.server != "" {
			ctxByServer[e.server] = e
		}
	}
	idsByServer := map[string]string{}
	for _, e := range r.entries {
		if e.fromContext && e.server != "" {
			idsByServer[e.server] = e.id
		}
	}
	for _, se := range secs {
		var key string
		switch {
		case se.Problem.Kind != "":
			key = "secret:" + se.Ref.In + "/" + se.Ref.Name + "/" + se.Ref.Key
		case se.ID == se.Ref.In && se.Server != holderServer[se.Ref.In]:
			// istiod ignores a key equal to its own cluster ID; the
			// context cluster already covers it.
			if h := r.contextEntryByID(se.Ref.In); h != nil {
				h.warnings = append(h.warnings, fmt.Sprintf("remote secret %s key %q equals this cluster's ID: ignored, as istiod does", se.Ref.Name, se.ID))
			}
			continue
		case ctxByServer[se.Server] != nil:
			// A context reaches this server: one cluster, whatever the
			// secret calls it (the context's ID and credentials win).
			c := ctxByServer[se.Server]
			key = c.key
			if c.id != se.ID {
				c.warnings = append(c.warnings, fmt.Sprintf("remote secret %s (in %s) calls this cluster %q", se.Ref.Name, se.Ref.In, se.ID))
			}
		default:
			key = "id:" + se.ID + "@" + se.Server
		}
		e := byKey[key]
		if e == nil {
			e = &entry{key: key, id: se.ID, source: se.Ref, server: se.Server}
			r.entries = append(r.entries, e)
			byKey[key] = e
		}
		if !desired[key] && !e.fromContext {
			// First secret for this cluster: it defines it.
			desired[key] = true
			e.id, e.source, e.sources = se.ID, se.Ref, []SourceRef{se.Ref}
			e.fixed = se.Problem
			if se.Problem.Kind == "" && (e.config == nil || e.hash != se.Hash || e.removed || e.w == nil) {
				if e.w != nil {
					r.log.Info("remote secret changed; restarting the cluster's watchers", "cluster", se.ID, "secret", se.Ref.Name)
					e.prevPart = e.w.part.Load()
					e.w.stop()
					e.w = nil
				}
				e.config, e.hash = se.Config, se.Hash
			}
			if se.Server != "" {
				if other, seen := idsByServer[se.Server]; seen && other != se.ID {
					e.warnings = append(e.warnings, fmt.Sprintf("same API server as cluster %q: istiod sees it twice (duplicate endpoints)", other))
				} else {
					idsByServer[se.Server] = se.ID
				}
			}
			continue
		}
		e.sources = append(e.sources, se.Ref)
	}
	// Entries no secret declares any more are removed.
	for _, e := range r.entries {
		if desired[e.key] {
			continue
		}
		if e.w != nil {
			e.w.stop()
			e.w = nil
		}
		if !e.removed {
			r.log.Info("cluster removed", "cluster", e.id)
		}
		e.removed = true
	}
	r.checkDuplicateIDs()
	for _, e := range r.entries {
		if desired[e.key] && !e.fromContext && e.w == nil && e.fixed.Kind == "" {
			r.startLocked(e)
		}
		if e.w != nil {
			e.w.dirty.Store(true) // IDs may have changed
		}
	}
}

func (r *Registry) contextEntryByID(id string) *entry {
	for _, e := range r.entries {
		if e.fromContext && e.id == id {
			return e
		}
	}
	return nil
}

// checkDuplicateIDs puts the later of two clusters with one ID (different
// API servers) in error, as istiod refuses a second registration.
// Contexts come first, then secrets oldest first.
func (r *Registry) checkDuplicateIDs() {
	first := map[string]*entry{}
	for _, e := range r.entries {
		if e.fixed.Kind == ErrDuplicateID {
			e.fixed = Problem{}
		}
	}
	for _, e := range r.entries {
		if e.removed {
			continue
		}
		f, dup := first[e.id]
		if !dup {
			first[e.id] = e
			continue
		}
		if e.fixed.Kind != "" {
			continue
		}
		what := f.source.Name
		if f.source.Kind == SourceSecret {
			what = "remote secret " + f.source.Name + " in " + f.source.In
		} else {
			what = "context " + what
		}
		e.fixed = problemf(ErrDuplicateID, "duplicate cluster ID %q: already registered by %s", e.id, what)
		if e.w != nil {
			e.w.stop()
			e.w = nil
		}
	}
}
