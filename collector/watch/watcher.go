package watch

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

const meshNetworksKey = "meshNetworks"

// resource names, used in sentences ("forbidden services").
const (
	resServices       = "services"
	resEndpointSlices = "endpointslices"
	resPods           = "pods"
	resNamespaces     = "namespaces"
	resNodes          = "nodes"
	resSecrets        = "secrets"
	resConfigMaps     = "configmaps"
)

// informerHealth is what we know about one informer beyond HasSynced.
type informerHealth struct {
	name     string
	required bool // the cluster cannot be "synced" without it
	inf      cache.SharedIndexInformer
	lastErr  errs.Failure // last watch/list error; cleared by the next event
	// onChange, when set, sees every added, updated or deleted object.
	onChange func(obj any)
	// unchanged, when set, tells an update that changes nothing meshscope
	// reads (unchanged.go): it marks the watch alive and publishes nothing.
	unchanged func(old, cur any) bool
	// transform is the informer's transform (what-if objects go through it
	// too); overlay, set only on a what-if's copy (overlay.go), is read
	// instead of the informer's store.
	transform cache.TransformFunc
	overlay   *overlayStore
	// scope is what its list-watch selects, and so which objects of a
	// what-if it holds (overlay.go); selector is scope.selector parsed.
	// typed says it holds typed objects (core kinds), not unstructured
	// ones (Istio config, Gateways).
	scope    scope
	selector labels.Selector
	typed    bool
}

// scope is what an informer's list-watch selects, recorded when add
// registers it: the list-watch is made from it, and a what-if routes a
// changed object to the informers whose scope selects it.
type scope struct {
	// kind is the objects' group and kind: taken from the informer's
	// example object when it is typed, given for unstructured ones.
	kind schema.GroupKind
	// namespace and name narrow it ("" for any); selector is its label
	// selector ("" for every object).
	namespace, name, selector string
}

// Config is what a watcher needs of the Registry's options: the one
// place they are read from (the Registry's Options), passed down.
type Config struct {
	// SystemNamespace is istiod's namespace; Revision the --revision
	// meshscope predicts for; DisableNodes leaves Nodes unwatched.
	SystemNamespace string
	Revision        string
	DisableNodes    bool
	// SyncTimeout, HealthInterval and HealthTimeout are the Registry's
	// (Options); Probe, when set, replaces the /version probe (tests make
	// it fail).
	SyncTimeout    time.Duration
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	Probe          func(ctx context.Context, c kubernetes.Interface) error
}

// Watcher runs the informers of one cluster and tracks its health. It only
// lists and watches. The Registry creates one per cluster and replaces it
// (stop, start) when the cluster's credentials change; what it reads of
// the caches is in watcher_view.go, the object parsers' files, and a
// what-if's overlays (overlay.go).
type Watcher struct {
	client kubernetes.Interface
	opts   *Config
	log    *slog.Logger
	redact errs.Redactor
	// notify tells the Registry that something changed (publish soon);
	// onSecrets that remote secrets changed (reconcile sources).
	notify    func()
	onSecrets func()

	cancel context.CancelFunc
	// group counts the goroutines Start started (the owner's, given to
	// Start): the owner waits for them after Stop.
	group *sync.WaitGroup
	// onSyncHook, given to Start, runs a reconcile synchronously at the
	// first sync (context clusters: their secrets and ID sources).
	onSyncHook func()

	infs                                                           []*informerHealth
	services, slices, pods, namespaces, nodes, secrets, configMaps *informerHealth
	destinationRules, peerAuthentications                          *informerHealth
	sidecars, virtualServices                                      *informerHealth
	istiods, rootCerts, tags                                       *informerHealth
	serviceEntriesInf, workloadEntriesInf                          *informerHealth
	// istioGateways are networking.istio.io Gateways (istiogateway.go).
	istioGateways *informerHealth
	// gateways (Gateway API) and whether the cluster serves that API.
	gateways   *informerHealth
	gatewayAPI *atomic.Bool

	// parsed caches the revisions' mesh config texts as parsed (shared
	// with the watcher's what-if shadows): the snapshot is rebuilt far
	// more often than mesh config changes.
	parsed *parsedConfigs

	// dirty is set by every event and cleared by the snapshot builder
	// before it reads the caches (Dirty, TakeDirty).
	dirty atomic.Bool

	mu          sync.Mutex
	startedAt   time.Time
	probed      bool         // the API server answered at least once
	probeErr    errs.Failure // last probe result (zero: healthy)
	timedOut    bool
	syncedAt    time.Time
	lastEventAt time.Time
	watchErrors int
	reconnects  int
	kick        chan struct{}
}

// New makes the watcher of one cluster with the informers every cluster
// has (the Add… methods add the ones only some have); nothing runs before
// Start. red cleans the sentences of its errors of the cluster's
// credentials; withSecrets watches the remote secrets (context clusters);
// notify is called on every change worth a new snapshot, onSecrets on
// every change planning reads (remote secrets, istiod pods, the injector).
func New(client kubernetes.Interface, opts *Config, log *slog.Logger, red errs.Redactor, withSecrets bool, notify, onSecrets func()) *Watcher {
	w := &Watcher{
		client: client, opts: opts, log: log, redact: red,
		notify: notify, onSecrets: onSecrets,
		kick: make(chan struct{}, 1), parsed: &parsedConfigs{},
	}
	ns := opts.SystemNamespace
	core := client.CoreV1()
	disc := client.DiscoveryV1()
	w.services = addInformer[*corev1.ServiceList](w, resServices, true, &corev1.Service{}, transformService, scope{}, core.Services)
	// Slices and pods are cached as slim types of our own, sharing one
	// interner (namespaces, node names, zones, label sets).
	in := newInterner()
	w.slices = addInformer[*discoveryv1.EndpointSliceList](w, resEndpointSlices, true, &discoveryv1.EndpointSlice{}, in.transformEndpointSlice, scope{}, disc.EndpointSlices)
	w.pods = addInformer[*corev1.PodList](w, resPods, true, &corev1.Pod{}, in.transformPod, scope{}, core.Pods)
	// Namespaces: the system namespace's network label, and every
	// namespace's labels — for meshConfig discoverySelectors (which
	// namespaces istiod reads) and ambient (which namespaces are in
	// ambient mode; serviceScopeConfigs select on namespace labels). A few
	// hundred small objects.
	w.namespaces = addInformer[*corev1.NamespaceList](w, resNamespaces, false, &corev1.Namespace{}, transformNamespace, scope{}, clusterScoped(core.Namespaces))
	w.namespaces.unchanged = unchangedNamespace
	if !opts.DisableNodes {
		w.nodes = addInformer[*corev1.NodeList](w, resNodes, false, &corev1.Node{}, transformNode, scope{}, clusterScoped(core.Nodes))
		w.nodes.unchanged = unchangedNode
	}
	// The system namespace's ConfigMaps: the mesh config, meshNetworks and
	// the sidecar injector's values (a handful of objects; the transform
	// keeps only the keys meshscope reads).
	w.configMaps = addInformer[*corev1.ConfigMapList](w, resConfigMaps, false, &corev1.ConfigMap{}, transformConfigMap, scope{namespace: ns}, core.ConfigMaps)
	w.configMaps.unchanged = unchangedConfigMap
	// A change of what names a context cluster (its istiod's CLUSTER_ID,
	// the injector's clusterName) re-plans the clusters, like a secret.
	w.addControlPlaneInformers(client, ns)
	w.istiods.onChange = func(any) { w.onSecrets() }
	w.configMaps.onChange = func(obj any) {
		if c, ok := unwrapDeleted(obj).(*corev1.ConfigMap); ok && strings.HasPrefix(c.Name, injectorConfigMap) {
			w.onSecrets()
		}
	}
	if withSecrets {
		w.secrets = addInformer[*corev1.SecretList](w, resSecrets, false, &corev1.Secret{}, transformSecret,
			scope{namespace: ns, selector: model.MultiClusterSecretLabel + "=true"}, core.Secrets)
	}
	return w
}

// selector is a list-watch's label selector (a constant of this package).
func selector(s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// listWatchable is what every typed client-go resource client offers.
type listWatchable[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (kwatch.Interface, error)
}

// addInformer adds an informer whose list-watch is made from its scope:
// client gives the resource client of a namespace (clusterScoped for
// cluster-scoped resources), and the scope's name and label selector
// narrow what it lists and watches.
func addInformer[L runtime.Object, C listWatchable[L]](w *Watcher, name string, required bool, example runtime.Object, tf cache.TransformFunc, sc scope, client func(namespace string) C) *informerHealth {
	return w.add(name, required, example, tf, sc, listWatch[L](client(sc.namespace), sc))
}

// clusterScoped is the client of a cluster-scoped resource as one of a
// namespace (its scope has none).
func clusterScoped[C any](client func() C) func(string) C {
	return func(string) C { return client() }
}

// listWatch lists and watches c, narrowed by the scope's name (a field
// selector) and label selector when given.
func listWatch[L runtime.Object](c listWatchable[L], sc scope) *cache.ListWatch {
	narrow := func(o *metav1.ListOptions) {
		if sc.name != "" {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", sc.name).String()
		}
		if sc.selector != "" {
			o.LabelSelector = sc.selector
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			narrow(&o)
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
			narrow(&o)
			return c.Watch(ctx, o)
		},
	}
}

// add registers an informer listing and watching lw, which selects what
// sc says (addInformer makes lw from sc; a list-watch of its own must
// select the same).
func (w *Watcher) add(name string, required bool, example runtime.Object, tf cache.TransformFunc, sc scope, lw *cache.ListWatch) *informerHealth {
	// The wrapper carries the client's answer to "do you support
	// watch-list streaming?": real API servers do (less memory at list
	// time); fake clientsets do not and would never sync without it.
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, w.client), example, 0, cache.Indexers{})
	h := &informerHealth{name: name, required: required, inf: inf, transform: tf, scope: sc}
	if _, isDynamic := example.(*unstructured.Unstructured); !isDynamic {
		gvks, _, err := scheme.Scheme.ObjectKinds(example)
		if err != nil {
			panic(err) // a typed informer of a type client-go does not know
		}
		h.scope.kind, h.typed = gvks[0].GroupKind(), true
	}
	if sc.selector != "" {
		h.selector = selector(sc.selector)
	}
	_ = inf.SetTransform(tf)
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		w.onWatchError(h, err)
	})
	isSecrets := name == resSecrets
	event := func(obj any) {
		w.mu.Lock()
		w.lastEventAt = time.Now()
		h.lastErr = errs.Failure{}
		w.mu.Unlock()
		w.dirty.Store(true)
		w.notify()
		if isSecrets {
			w.onSecrets()
		}
		if h.onChange != nil {
			h.onChange(obj)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: event,
		UpdateFunc: func(old, obj any) {
			if h.unchanged != nil && h.unchanged(old, obj) {
				w.mu.Lock()
				w.lastEventAt = time.Now()
				h.lastErr = errs.Failure{}
				w.mu.Unlock()
				return
			}
			event(obj)
		},
		DeleteFunc: event,
	})
	w.infs = append(w.infs, h)
	return h
}

// onWatchError records an informer's list/watch error. It does not decide
// the cluster's state by itself (a watch that ends and reconnects is
// normal); it asks the health probe to look now, which is what makes a
// dead API server leave "synced" within seconds.
func (w *Watcher) onWatchError(h *informerHealth, err error) {
	p := w.redact.Redact(errs.Classify(err, h.name))
	w.mu.Lock()
	h.lastErr = p
	w.watchErrors++
	w.mu.Unlock()
	w.log.Debug("watch error", "resource", h.name, "kind", p.Kind, "reason", p.Reason)
	select {
	case w.kick <- struct{}{}:
	default:
	}
	w.notify()
}

// Start runs the informers, the sync tracker and the health probe until
// ctx is done or Stop is called, each goroutine counted in group: the
// owner waits for them there after Stop (Stop does not wait: the Registry
// stops watchers under its lock, which the onSync hook takes). onSync,
// when not nil, runs synchronously at the first sync, before the cluster
// can be seen as synced: a context cluster plans again there (its secrets
// and the IDs its istiod uses), so that a settled snapshot lists every
// cluster already.
func (w *Watcher) Start(ctx context.Context, group *sync.WaitGroup, onSync func()) {
	w.onSyncHook = onSync
	w.group = group
	ctx, w.cancel = context.WithCancel(ctx)
	w.mu.Lock()
	w.startedAt = time.Now()
	w.mu.Unlock()
	for _, h := range w.infs {
		// RunWithContext returns once its reflector and handlers did.
		group.Go(func() { h.inf.RunWithContext(ctx) })
	}
	group.Go(func() { w.trackSync(ctx) })
	group.Go(func() { w.probeLoop(ctx) })
}

// Synced reports whether the initial sync completed: a swap of watchers
// shows the old share until the new one has.
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.syncedAt.IsZero()
}

// Stop ends the informers and the probe; the caches stay readable. The
// goroutines end soon after: Start's group waits for them.
func (w *Watcher) Stop() {
	if w.cancel != nil {
		w.cancel()
	}
}

// Dirty says whether an event came since the last TakeDirty: a what-if
// reuses a live part only while its caches did not change.
func (w *Watcher) Dirty() bool { return w.dirty.Load() }

// TakeDirty clears the dirty flag and says whether it was set: the
// Registry rebuilds a cluster's part only when its caches changed.
func (w *Watcher) TakeDirty() bool { return w.dirty.Swap(false) }

// MarkDirty makes the next build rebuild the cluster's part (its ID or
// network may have changed without an event).
func (w *Watcher) MarkDirty() { w.dirty.Store(true) }

// settled reports whether the initial sync is complete: every required
// informer synced, and every optional one synced or failed (a missing
// permission for nodes or secrets must not hold the cluster back).
func (w *Watcher) settled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.infs {
		if h.inf.HasSynced() {
			continue
		}
		if h.required || h.lastErr.Kind == "" {
			return false
		}
	}
	return true
}

// trackSync stamps syncedAt when the initial sync completes and sets
// timedOut after SyncTimeout without it.
func (w *Watcher) trackSync(ctx context.Context) {
	deadline := time.NewTimer(w.opts.SyncTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			w.mu.Lock()
			if w.syncedAt.IsZero() {
				w.timedOut = true
			}
			w.mu.Unlock()
			w.notify()
		case <-tick.C:
			if !w.settled() {
				continue
			}
			// Plan again before anyone can see this cluster as synced
			// (status needs syncedAt), so that a settled snapshot already
			// lists every cluster its secrets declare, under the ID its
			// istiod uses.
			if w.onSyncHook != nil {
				w.onSyncHook()
			}
			w.mu.Lock()
			w.syncedAt = time.Now()
			w.mu.Unlock()
			w.dirty.Store(true)
			w.notify()
			return
		}
	}
}

// probeLoop asks the API server for its version every HealthInterval (and
// at once after a watch error), with HealthTimeout. One failure puts the
// cluster in error with the classified reason; the next success clears it.
// With the defaults (3 s, 2 s) a dead API server leaves "synced" in at most
// about 5 s, a blackholed one in about 5 s as well — well within 15 s.
func (w *Watcher) probeLoop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.kick:
			// Watch errors come in bursts (one per informer): probe at
			// most twice a second.
			if d := 500*time.Millisecond - time.Since(last); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
		}
		last = time.Now()
		pctx, cancel := context.WithTimeout(ctx, w.opts.HealthTimeout)
		var err error
		if w.opts.Probe != nil {
			err = w.opts.Probe(pctx, w.client)
		} else {
			err = defaultProbe(pctx, w.client, w.group)
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		w.recordProbe(err)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(w.opts.HealthInterval)
	}
}

// defaultProbe asks the API server for /version: open to every user by
// default, cheap, and it fails with 401 when credentials are revoked. A
// fake's answer is awaited in a goroutine counted in group.
func defaultProbe(ctx context.Context, c kubernetes.Interface, group *sync.WaitGroup) error {
	d := c.Discovery()
	if d == nil {
		return nil
	}
	if rc := d.RESTClient(); rc != nil {
		if r, ok := rc.(*rest.RESTClient); !ok || r != nil {
			return rc.Get().AbsPath("/version").Do(ctx).Error()
		}
	}
	// Fakes have no REST client: ServerVersion goes through their
	// reactors. It takes no context, so wait for it with one.
	ch := make(chan error, 1)
	group.Go(func() {
		_, err := d.ServerVersion()
		ch <- err
	})
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Watcher) recordProbe(err error) {
	var p errs.Failure
	if err != nil {
		p = w.redact.Redact(errs.Classify(err, "the API server"))
		if p.Kind == model.ErrForbidden {
			// /version is open to everyone by default; a 403 here still
			// means the server answers, so it is not a health failure.
			p = errs.Failure{}
		}
	}
	w.mu.Lock()
	changed := p != w.probeErr || !w.probed
	if p.Kind == "" && w.probeErr.Kind != "" && !w.syncedAt.IsZero() {
		w.reconnects++
	}
	if p.Kind == "" {
		w.probed = true
		// The server answers again: connection-level errors of synced
		// informers are over (their reflectors relist on their own).
		// Forbidden stays until the informer sees an event.
		for _, h := range w.infs {
			if h.inf.HasSynced() && h.lastErr.Kind != model.ErrForbidden {
				h.lastErr = errs.Failure{}
			}
		}
	}
	w.probeErr = p
	w.mu.Unlock()
	if changed {
		if p.Kind != "" {
			w.log.Info("cluster unhealthy", "kind", p.Kind, "reason", p.Reason)
		} else {
			w.log.Info("cluster healthy")
		}
		w.notify()
	}
}

// Status fills the cluster's state, sync and watch health from the facts
// gathered so far: the Registry knows the cluster, the watcher its health.
func (w *Watcher) Status(c *model.Cluster) {
	settled := w.settled()
	w.mu.Lock()
	defer w.mu.Unlock()
	// Synced only once trackSync stamped it, which it does after the
	// remote secrets were reconciled.
	settled = settled && !w.syncedAt.IsZero()
	c.SyncedAt = w.syncedAt
	c.LastEventAt = w.lastEventAt
	c.WatchErrors = w.watchErrors
	c.Reconnects = w.reconnects
	for _, h := range w.infs {
		// When the API server itself fails, every informer fails for
		// the same reason: the Reason says it once.
		if h.required || h.lastErr.Kind == "" || w.probeErr.Kind != "" {
			continue
		}
		if h.lastErr.Kind == model.ErrForbidden || h.lastErr.Kind == model.ErrUnauthorized || !h.inf.HasSynced() {
			c.Warnings = append(c.Warnings, optionalWarning(h))
		}
	}
	switch {
	case w.probeErr.Kind != "":
		c.State, c.ErrorKind, c.Reason = model.StateError, w.probeErr.Kind, w.probeErr.Reason
		return
	case !settled:
		for _, h := range w.infs {
			if h.required && !h.inf.HasSynced() && h.lastErr.Kind != "" && h.lastErr.Kind != model.ErrUnreachable {
				c.State, c.ErrorKind, c.Reason = model.StateError, h.lastErr.Kind, h.lastErr.Reason
				return
			}
		}
		if w.timedOut {
			c.State, c.ErrorKind = model.StateTimeout, ""
			c.Reason = fmt.Sprintf("not synced after %s (waiting for %s)", w.opts.SyncTimeout, strings.Join(w.unsyncedLocked(), ", "))
			return
		}
		// Connecting until the API server has answered: the probe, or
		// any informer that already listed.
		c.State = model.StateConnecting
		if w.probed {
			c.State = model.StateSyncing
		}
		for _, h := range w.infs {
			if h.inf.HasSynced() {
				c.State = model.StateSyncing
				break
			}
		}
	default:
		c.State = model.StateSynced
		for _, h := range w.infs {
			if h.required && h.lastErr.Kind == model.ErrForbidden {
				c.Warnings = append(c.Warnings, "lost access to "+h.name+": "+h.lastErr.Reason)
			}
		}
	}
}

func (w *Watcher) unsyncedLocked() []string {
	var out []string
	for _, h := range w.infs {
		if !h.inf.HasSynced() {
			out = append(out, h.name)
		}
	}
	sort.Strings(out)
	return out
}

func optionalWarning(h *informerHealth) string {
	what := map[string]string{
		resSecrets:    "cannot read remote secrets",
		resNodes:      "cannot read nodes (no localities)",
		resNamespaces: "cannot read the system namespace (its network label is unknown)",
		resConfigMaps: "cannot read ConfigMap istio (meshNetworks unknown)",
		resGateways:   "cannot read Gateway API Gateways (ambient east-west gateways unknown)",
	}[h.name]
	if what == "" {
		what = "cannot read " + h.name
	}
	reason := string(h.lastErr.Kind)
	if h.lastErr.Kind != model.ErrForbidden && h.lastErr.Kind != model.ErrUnauthorized {
		reason = h.lastErr.Reason
	}
	return what + ": " + reason
}

// meshConfigKey is the ConfigMap key istiod reads its MeshConfig from
// (pkg/config/mesh/kubemesh MeshConfigKey).
const meshConfigKey = "mesh"

// unwrapDeleted returns the object of a delete event whose final state was
// unknown to the informer.
func unwrapDeleted(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}
