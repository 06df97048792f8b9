package collector

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// Reading one live object whole, for a fix (analysis/fix): the complete
// object as `kubectl get -o yaml` gives it, which the fix edits and a
// person applies. A GET, never a write. The informers' caches hold slim
// copies only, so this asks the API server.

// getKinds are the kinds a fix reads: core and apps kinds through the
// typed client (which client-go's fakes serve too), Istio config through
// the dynamic client. Secrets are not among them: a fix never reads one.
var getKinds = map[string]schema.GroupVersionResource{
	"Namespace":          {Version: "v1", Resource: "namespaces"},
	"Service":            {Version: "v1", Resource: "services"},
	"Pod":                {Version: "v1", Resource: "pods"},
	"ConfigMap":          {Version: "v1", Resource: "configmaps"},
	"Deployment":         {Group: "apps", Version: "v1", Resource: "deployments"},
	"StatefulSet":        {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"DaemonSet":          {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"ReplicaSet":         {Group: "apps", Version: "v1", Resource: "replicasets"},
	"DestinationRule":    {Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"},
	"Gateway":            {Group: "networking.istio.io", Version: "v1", Resource: "gateways"},
	"ServiceEntry":       {Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"},
	"WorkloadEntry":      {Group: "networking.istio.io", Version: "v1", Resource: "workloadentries"},
	"PeerAuthentication": {Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"},
}

// Get reads one object of a cluster of the mesh, complete (metadata,
// spec, status: the caller drops what a manifest leaves out), with its
// apiVersion and kind set. It reads through the client meshscope watches
// the cluster with; an error says which object could not be read and why,
// without credentials.
func (r *Registry) Get(ctx context.Context, ref model.ObjectRef) (*unstructured.Unstructured, error) {
	gvr, ok := getKinds[ref.Kind]
	if !ok {
		return nil, fmt.Errorf("%s: meshscope does not read objects of kind %s for a fix", ref, ref.Kind)
	}
	cs, dyn, red, err := r.clientsOf(ref.Cluster)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", ref, err)
	}
	var obj runtime.Object
	opts := metav1.GetOptions{}
	switch {
	case gvr.Group == "" || gvr.Group == "apps":
		obj, err = typedGet(ctx, cs, ref, opts)
	case dyn == nil:
		err = fmt.Errorf("no client for Istio config in cluster %s", ref.Cluster)
	default:
		obj, err = dyn.Resource(gvr).Namespace(ref.Namespace).Get(ctx, ref.Name, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", ref, red.Clean(errs.OneLine(err.Error())))
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(schema.GroupVersion{Group: gvr.Group, Version: gvr.Version}.String())
	u.SetKind(ref.Kind)
	return u, nil
}

// typedGet reads a core or apps object through the typed client.
func typedGet(ctx context.Context, cs kubernetes.Interface, ref model.ObjectRef, opts metav1.GetOptions) (runtime.Object, error) {
	ns, name := ref.Namespace, ref.Name
	switch ref.Kind {
	case "Namespace":
		return cs.CoreV1().Namespaces().Get(ctx, name, opts)
	case "Service":
		return cs.CoreV1().Services(ns).Get(ctx, name, opts)
	case "Pod":
		return cs.CoreV1().Pods(ns).Get(ctx, name, opts)
	case "ConfigMap":
		return cs.CoreV1().ConfigMaps(ns).Get(ctx, name, opts)
	case "Deployment":
		return cs.AppsV1().Deployments(ns).Get(ctx, name, opts)
	case "StatefulSet":
		return cs.AppsV1().StatefulSets(ns).Get(ctx, name, opts)
	case "DaemonSet":
		return cs.AppsV1().DaemonSets(ns).Get(ctx, name, opts)
	case "ReplicaSet":
		return cs.AppsV1().ReplicaSets(ns).Get(ctx, name, opts)
	}
	return nil, fmt.Errorf("kind %s", ref.Kind)
}

// clientsOf are the clients of a watched cluster (the context's own, else
// ones made from the remote secret's config it is watched with) and the
// redactor of that config's secrets.
func (r *Registry) clientsOf(id string) (kubernetes.Interface, dynamic.Interface, errs.Redactor, error) {
	r.mu.Lock()
	var e *entry
	var ids []string
	for _, x := range r.entries {
		if x.id == id && !x.removed && e == nil {
			e = x
		}
		ids = append(ids, x.id)
	}
	r.mu.Unlock()
	if e == nil {
		slices.Sort(ids)
		return nil, nil, nil, fmt.Errorf("no cluster %q in the mesh (clusters: %s)", id, strings.Join(ids, ", "))
	}
	red := redactorForConfig(e.config)
	if e.fixed.Kind != "" {
		return nil, nil, red, fmt.Errorf("cluster %s cannot be read (%s)", id, e.fixed.Reason)
	}
	cs, dyn := e.ctxSource.Client, e.ctxSource.Dynamic
	var err error
	if cs == nil || !e.fromContext {
		if cs, err = r.newClient(e.id, e.config); err != nil {
			return nil, nil, red, fmt.Errorf("cannot build a client for cluster %s: %s", id, red.Clean(errs.OneLine(err.Error())))
		}
		dyn = nil
	}
	if dyn == nil && e.config != nil {
		dyn, _ = r.opts.NewDynamicClient(e.id, rest.CopyConfig(e.config))
	}
	return cs, dyn, red, nil
}
