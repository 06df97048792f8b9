package watch

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
)

var gvrGateways = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

const resGateways = "gateways"

// gatewayAbsentRecheck is how often a cluster without Gateway API is asked
// again whether it has it now.
var gatewayAbsentRecheck = 30 * time.Second

// AddGatewayInformer watches Gateway API Gateways (optional). istiod reads
// them in every cluster of the mesh, remote ones included: an east-west
// gateway is declared in the cluster it runs in. A cluster without Gateway
// API's CRDs is not an error: it has no Gateways (see gatewayListWatch).
func (w *Watcher) AddGatewayInformer(dyn dynamic.Interface) {
	sc := scope{kind: schema.GroupKind{Group: gvrGateways.Group, Kind: "Gateway"}}
	lw, present := gatewayListWatch(dyn.Resource(gvrGateways).Namespace(sc.namespace))
	w.gateways = w.add(resGateways, false, &unstructured.Unstructured{}, transformGateway, sc, lw)
	w.gatewayAPI = present
}

// gatewayListWatch lists and watches Gateways; when the API server does not
// know the resource (no CRDs), the list is empty and the watch a quiet one
// that ends every gatewayAbsentRecheck, so that CRDs installed later are
// noticed (the watch then fails once, and the informer lists again).
func gatewayListWatch(c dynamic.ResourceInterface) (*cache.ListWatch, *atomic.Bool) {
	present := &atomic.Bool{}
	absent := &atomic.Bool{}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := c.List(ctx, o)
			if apierrors.IsNotFound(err) {
				absent.Store(true)
				present.Store(false)
				return &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": "0"}}}, nil
			}
			if err == nil {
				absent.Store(false)
				present.Store(true)
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
			if !absent.Load() {
				// Real API servers stream the initial state through this
				// watch (watch-list): no List is made when it works.
				wi, err := c.Watch(ctx, o)
				if err == nil {
					present.Store(true)
				}
				return wi, err
			}
			probe := o
			probe.ResourceVersion, probe.Limit = "", 1
			if _, err := c.List(ctx, probe); err == nil {
				return nil, errors.New("gateway.networking.k8s.io appeared: listing Gateways again")
			}
			return newQuietWatch(ctx, gatewayAbsentRecheck), nil
		},
	}, present
}

// quietWatch delivers no events and ends after d (or with ctx).
type quietWatch struct {
	ch   chan kwatch.Event
	stop chan struct{}
	done atomic.Bool
	// ended is closed when its goroutine has returned.
	ended chan struct{}
}

func newQuietWatch(ctx context.Context, d time.Duration) *quietWatch {
	q := &quietWatch{ch: make(chan kwatch.Event), stop: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(q.ended)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-q.stop:
		}
		close(q.ch)
	}()
	return q
}

// Stop ends the watch and waits for its goroutine (which never blocks:
// closing ch wakes any reader).
func (q *quietWatch) Stop() {
	if q.done.CompareAndSwap(false, true) {
		close(q.stop)
	}
	<-q.ended
}

func (q *quietWatch) ResultChan() <-chan kwatch.Event { return q.ch }

// transformGateway keeps what istiod reads of a Gateway: its ambient index
// (pilot/pkg/serviceregistry/ambient/networks.go) class, network label,
// listeners, status addresses and the service account it derives; as a
// waypoint (waypoints.go) the istio.io/waypoint-for label and the
// listeners' allowedRoutes; its
// sidecar network gateways (kube/controller/network.go
// handleGatewayResource) spec addresses, listeners' tls options and the
// gatewayPort label too.
func transformGateway(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	g := &build.GatewayObject{ResourceVersion: u.GetResourceVersion()}
	g.Namespace, g.Name = u.GetNamespace(), u.GetName()
	g.Class, _, _ = unstructured.NestedString(u.Object, "spec", "gatewayClassName")
	g.Network = u.GetLabels()[model.LabelNetwork]
	g.WaypointFor = u.GetLabels()[model.LabelWaypointFor]
	g.PassthroughPort = strconv.Itoa(model.DefaultGatewayPort)
	if p, ok := u.GetLabels()[model.LabelGatewayPort]; ok {
		g.PassthroughPort = p
	}
	// kube.GatewaySA: the annotation, else name-class for istio-remote,
	// else the name.
	switch sa := u.GetAnnotations()[model.AnnotationGatewayServiceAccount]; {
	case sa != "":
		g.ServiceAccount = sa
	case g.Class == model.ClassRemote:
		g.ServiceAccount = g.Name + "-" + g.Class
	default:
		g.ServiceAccount = g.Name
	}
	ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
	for _, l := range ls {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		gl := model.GatewayListener{}
		gl.Name, _, _ = unstructured.NestedString(m, "name")
		gl.Protocol, _, _ = unstructured.NestedString(m, "protocol")
		gl.TLSMode, _, _ = unstructured.NestedString(m, "tls", "mode")
		_, gl.TLS = m["tls"].(map[string]any)
		gl.ListenerMode, _, _ = unstructured.NestedString(m, "tls", "options", model.OptionListenerMode)
		gl.AllowedFrom, _, _ = unstructured.NestedString(m, "allowedRoutes", "namespaces", "from")
		gl.AllowedSelector = labelSelector(m)
		if p, ok, _ := unstructured.NestedInt64(m, "port"); ok {
			gl.Port = uint32(p)
		} else if f, ok, _ := unstructured.NestedFloat64(m, "port"); ok {
			gl.Port = uint32(f)
		}
		g.Listeners = append(g.Listeners, gl)
	}
	g.Addresses = gatewayAddresses(u, "status")
	g.SpecAddresses = gatewayAddresses(u, "spec")
	return g, nil
}

// gatewayAddresses reads a Gateway's spec or status addresses.
func gatewayAddresses(u *unstructured.Unstructured, part string) []model.GatewayAddress {
	as, _, _ := unstructured.NestedSlice(u.Object, part, "addresses")
	var out []model.GatewayAddress
	for _, a := range as {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		ga := model.GatewayAddress{}
		ga.Type, _, _ = unstructured.NestedString(m, "type")
		ga.Value, _, _ = unstructured.NestedString(m, "value")
		out = append(out, ga)
	}
	return out
}

// labelSelector reads a listener's allowedRoutes.namespaces.selector (nil
// when unset or not a selector).
func labelSelector(listener map[string]any) *metav1.LabelSelector {
	m, ok, _ := unstructured.NestedMap(listener, "allowedRoutes", "namespaces", "selector")
	if !ok {
		return nil
	}
	sel := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel); err != nil {
		return nil
	}
	return sel
}
