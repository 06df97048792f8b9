package watch

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// istiod reads pods, not the controllers that make them; operators change
// the controllers. A what-if of a workload controller (apps/v1 Deployment,
// StatefulSet, DaemonSet, ReplicaSet) plays its controller's part: every
// live pod it owns is replaced, through the pod informers' own path
// (Apply), by the pod its template would make — keeping the live pod's
// name, address, node and readiness, which meshscope cannot invent — and
// the endpoint controller's part (EndpointSlices) then rewrites the
// slices.
//
// Which pods a controller owns: a pod of its namespace that its selector
// selects and whose controller owner reference (kept in the pod cache,
// build.PodTemplate.Controller) names it — for a Deployment, the
// ReplicaSet its controller names <deployment>-<pod-template-hash>, the
// hash being the pod's pod-template-hash label, as the deployment
// controller names them. A pod without a controller is not owned (a
// ReplicaSet would adopt it, not change it).

// workloadKinds are the controllers a what-if expands into their pods.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true}

// IsWorkload says whether gk is a workload controller that a what-if
// expands into the pods it owns.
func IsWorkload(gk schema.GroupKind) bool {
	return gk.Group == appsv1.GroupName && workloadKinds[gk.Kind]
}

// controllerLabels are the labels a controller adds to the pods it makes
// from the template, and the node's topology labels Kubernetes 1.33+
// copies onto a pod when it is bound; a re-made pod keeps the live pod's
// (its node is kept; a new template hash cannot be known).
var controllerLabels = []string{
	appsv1.DefaultDeploymentUniqueLabelKey, appsv1.ControllerRevisionHashLabelKey,
	appsv1.StatefulSetPodNameLabel, appsv1.PodIndexLabel, appsv1.DeprecatedTemplateGeneration,
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
}

// workload is what a what-if reads of a workload controller.
type workload struct {
	kind, namespace, name string
	selector              labels.Selector
	template              corev1.PodTemplateSpec
	// replicas is spec.replicas (nil when the object does not say, or a
	// DaemonSet).
	replicas *int32
	// onDelete: updateStrategy OnDelete (StatefulSet, DaemonSet): the
	// controller re-makes a pod only when it is deleted.
	onDelete bool
	// partition is a StatefulSet's rolling-update partition: pods of a
	// lower ordinal keep the old template.
	partition int32
	// paused: a paused Deployment rolls nothing out (it still scales).
	paused bool
}

func readWorkload(u *unstructured.Unstructured) (workload, error) {
	wl := workload{kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}
	var sel *metav1.LabelSelector
	from := func(typed any) error { return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed) }
	switch wl.kind {
	case "Deployment":
		var d appsv1.Deployment
		if err := from(&d); err != nil {
			return wl, err
		}
		sel, wl.template, wl.replicas, wl.paused = d.Spec.Selector, d.Spec.Template, d.Spec.Replicas, d.Spec.Paused
	case "ReplicaSet":
		var r appsv1.ReplicaSet
		if err := from(&r); err != nil {
			return wl, err
		}
		sel, wl.template, wl.replicas = r.Spec.Selector, r.Spec.Template, r.Spec.Replicas
	case "StatefulSet":
		var s appsv1.StatefulSet
		if err := from(&s); err != nil {
			return wl, err
		}
		sel, wl.template, wl.replicas = s.Spec.Selector, s.Spec.Template, s.Spec.Replicas
		wl.onDelete = s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType
		if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			wl.partition = *ru.Partition
		}
	case "DaemonSet":
		var d appsv1.DaemonSet
		if err := from(&d); err != nil {
			return wl, err
		}
		sel, wl.template = d.Spec.Selector, d.Spec.Template
		wl.onDelete = d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType
	}
	if sel == nil {
		return wl, fmt.Errorf("%s %s has no spec.selector (apps/v1 requires one)", wl.kind, wl.namespace+"/"+wl.name)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return wl, fmt.Errorf("%s %s: spec.selector: %w", wl.kind, wl.namespace+"/"+wl.name, err)
	}
	wl.selector = s
	return wl, nil
}

// owns says whether the workload is p's controller and still selects it.
func (wl workload) owns(p *build.Pod) bool {
	if p.Namespace != wl.namespace || p.Controller == "" || !wl.selector.Matches(labels.Set(p.Labels)) {
		return false
	}
	if wl.kind == "Deployment" {
		h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		return h != "" && p.Controller == "ReplicaSet/"+wl.name+"-"+h
	}
	return p.Controller == wl.kind+"/"+wl.name
}

// ownRule says for people which pods the workload would own.
func (wl workload) ownRule() string {
	owner := wl.kind + " " + wl.name
	if wl.kind == "Deployment" {
		owner = "a ReplicaSet " + wl.name + "-<pod-template-hash>"
	}
	return fmt.Sprintf("no pod of %s selected by %s has %s as its controller", wl.namespace, wl.selector, owner)
}

// fate is what the controller does to one pod it owns.
type fate int

const (
	remade fate = iota
	gone
	kept
)

// ordinal is a StatefulSet pod's ordinal (its pod-index label, or its
// name's last part), -1 when it has none.
func ordinal(p *build.Pod) int {
	s := p.Labels[appsv1.PodIndexLabel]
	if s == "" {
		s = p.Name[strings.LastIndexByte(p.Name, '-')+1:]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func (wl workload) fate(p *build.Pod, del bool) fate {
	switch {
	case del, wl.replicas != nil && *wl.replicas == 0:
		return gone
	case wl.kind == "StatefulSet" && wl.replicas != nil && ordinal(p) >= int(*wl.replicas):
		return gone // a StatefulSet scales down from its highest ordinal
	case wl.kind == "StatefulSet" && ordinal(p) >= 0 && ordinal(p) < int(wl.partition),
		wl.paused:
		return kept
	}
	return remade
}

// madePod is the pod the workload's template makes in live's place: the
// template's labels, annotations and containers, the labels the
// controller adds kept from live, live's controller, and what the
// sidecar injector and istio-cni did to live done again (injected, below).
// The API server's and kubelet's part — node, address, readiness — is
// kept from live when it enters the overlay (keepServerFields).
func (wl workload) madePod(live *build.Pod) *corev1.Pod {
	t := wl.template.DeepCopy()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: live.Name, Namespace: live.Namespace, Labels: t.Labels, Annotations: t.Annotations},
		Spec:       t.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for _, k := range controllerLabels {
		if v, ok := live.Labels[k]; ok {
			if _, set := pod.Labels[k]; !set {
				pod.Labels[k] = v
			}
		}
	}
	if kind, name, ok := strings.Cut(live.Controller, "/"); ok {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: kind, Name: name, Controller: ptr.To(true)}}
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default" // the ServiceAccount admission plugin
	}
	pod.Spec.NodeName = ""
	wl.inject(pod, live)
	// istio-cni's node agent enrolls the new pod as it did the live one,
	// unless the template opts out.
	if live.Redirected && pod.Labels[model.LabelDataplaneMode] != "none" {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[model.AnnotationRedirection] = "enabled"
	}
	return pod
}

// labelInject turns injection on or off for a pod (label, else annotation).
const labelInject = "sidecar.istio.io/inject"

// inject does again what the sidecar injector did to live: when live has
// an injected istio-proxy (a sidecar or a gateway) and the template does
// not turn injection off (sidecar.istio.io/inject: "false", label first,
// then annotation), the new pod gets the same proxy and the labels
// istio's injection templates add where the template has none: the mTLS
// label ("istio", sidecars only), the canonical name and revision, and
// the network (the template's label, else the proxy's, as the injector's
// extractClusterAndNetwork). A template that turns injection on for a
// pod that has none is not injected here (meshscope does not run the
// injector).
func (wl workload) inject(pod *corev1.Pod, live *build.Pod) {
	id := live.Injected
	if id == nil || id.Kind == model.ProxyZtunnel {
		return
	}
	v, ok := pod.Labels[labelInject]
	if !ok {
		v = pod.Annotations[labelInject]
	}
	if v == "false" {
		return
	}
	network := id.Network
	if n, ok := pod.Labels[model.LabelNetwork]; ok {
		network = n
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == xdsclient.ProxyContainerName })
	if i < 0 {
		args := []string{"proxy", "sidecar"}
		if id.Kind == model.ProxyGateway {
			args = []string{"proxy", "router"}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: xdsclient.ProxyContainerName, Image: id.Image, Args: args})
		i = len(pod.Spec.Containers) - 1
	}
	c := &pod.Spec.Containers[i]
	if c.Image == "" || c.Image == "auto" {
		c.Image = id.Image
	}
	setEnv := func(k, v string) {
		if v == "" || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == k }) {
			return
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	setEnv("ISTIO_META_NETWORK", network)
	setEnv("ISTIO_META_CLUSTER_ID", id.ClusterID)
	l := pod.Labels
	def := func(k string, vals ...string) {
		if _, set := l[k]; set {
			return
		}
		for _, v := range vals {
			if v != "" {
				l[k] = v
				return
			}
		}
	}
	if id.Kind == model.ProxySidecar {
		def(model.LabelTLSMode, "istio")
	}
	name := wl.name
	if wl.kind == "ReplicaSet" {
		name = strings.TrimSuffix(name, "-"+l[appsv1.DefaultDeploymentUniqueLabelKey])
	}
	def(model.LabelCanonicalName, l["app.kubernetes.io/name"], l["app"], name)
	def(model.LabelCanonicalRevision, l["app.kubernetes.io/version"], l["version"], "latest")
	if network != "" {
		l[model.LabelNetwork] = network
	}
}

// ApplyWorkload plays a workload controller's part in the overlay: each
// live pod obj owns is re-made from its template, or deleted (obj
// deleted, scaled to zero, a StatefulSet's ordinals past its replicas),
// through Apply. read names the caches changed; effect says what became
// of the pods ("2 pods in cluster2 re-made from its template: …"); unread
// says why nothing changed (it owns no live pod).
func (o *Overlay) ApplyWorkload(obj *unstructured.Unstructured, del bool) (read []string, effect, unread string, err error) {
	wl, err := readWorkload(obj)
	if err != nil {
		return nil, "", "", err
	}
	if o.w.pods == nil {
		return nil, "", "meshscope reads no pods of cluster " + o.cluster, nil
	}
	var owned []*build.Pod
	for p := range objectsOf[*build.Pod](o.storeOf(o.w.pods)) {
		if wl.owns(p) {
			owned = append(owned, p)
		}
	}
	if len(owned) == 0 {
		return nil, "", fmt.Sprintf("it owns no live pod in %s (%s)", o.cluster, wl.ownRule()), nil
	}
	slices.SortFunc(owned, func(a, b *build.Pod) int { return strings.Compare(a.Name, b.Name) })
	var made, removed, left []string
	same := true
	addRead := func(r []string) {
		for _, n := range r {
			if !slices.Contains(read, n) {
				read = append(read, n)
			}
		}
	}
	for _, p := range owned {
		switch wl.fate(p, del) {
		case kept:
			left = append(left, p.Name)
		case gone:
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("Pod")
			u.SetNamespace(p.Namespace)
			u.SetName(p.Name)
			r, _, err := o.Apply(u, true)
			if err != nil {
				return read, "", "", err
			}
			addRead(r)
			removed = append(removed, p.Name)
		case remade:
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(wl.madePod(p))
			if err != nil {
				return read, "", "", err
			}
			delete(m, "status") // the kubelet's: kept from the live pod
			r, _, err := o.Apply(&unstructured.Unstructured{Object: m}, false)
			if err != nil {
				return read, "", "", err
			}
			addRead(r)
			if ov := o.stores[o.w.pods]; ov != nil {
				c, _ := ov.put[p.Namespace+"/"+p.Name].(*build.Pod)
				same = same && c != nil && samePod(p, c)
			}
			made = append(made, p.Name)
		}
	}
	return read, wl.effect(o.cluster, del, len(owned), made, removed, left, same), "", nil
}

// effect says what became of the pods the workload owns.
func (wl workload) effect(cluster string, del bool, owned int, made, removed, left []string, same bool) string {
	var parts []string
	if len(made) > 0 {
		s := fmt.Sprintf("%s in %s re-made from its template (%s), each keeping its live name, address, node and readiness", pods(len(made)), cluster, names(made))
		if same {
			s += "; nothing meshscope reads of them changes"
		}
		switch {
		case wl.kind == "ReplicaSet":
			s += "; a ReplicaSet does not update its live pods: this is what they become as they are re-made"
		case wl.onDelete:
			s += "; updateStrategy OnDelete: this is what they become as each is deleted"
		}
		parts = append(parts, s)
	}
	if len(removed) > 0 {
		why := "deleted with it"
		switch {
		case del:
		case *wl.replicas == 0:
			why = "gone: it is scaled to 0"
		default:
			why = fmt.Sprintf("gone: it is scaled to %d (the highest ordinals go)", *wl.replicas)
		}
		parts = append(parts, fmt.Sprintf("%s in %s %s (%s)", pods(len(removed)), cluster, why, names(removed)))
	}
	asThey := "as they are"
	if len(left) == 1 {
		asThey = "as it is"
	}
	switch {
	case len(left) > 0 && wl.paused:
		parts = append(parts, fmt.Sprintf("it is paused: %s in %s kept %s until it is resumed (%s)", pods(len(left)), cluster, asThey, names(left)))
	case len(left) > 0:
		parts = append(parts, fmt.Sprintf("%s in %s below its rolling-update partition %d kept %s (%s)", pods(len(left)), cluster, wl.partition, asThey, names(left)))
	}
	if !del && wl.replicas != nil && *wl.replicas != 0 && wl.kind != "StatefulSet" && int(*wl.replicas) != owned {
		if int(*wl.replicas) > owned {
			parts = append(parts, fmt.Sprintf("spec.replicas %d, %d live: the %d new pods are not predicted (their addresses cannot be known)", *wl.replicas, owned, int(*wl.replicas)-owned))
		} else {
			parts = append(parts, fmt.Sprintf("spec.replicas %d, %d live: meshscope keeps every live pod (which ones go is the controller's choice)", *wl.replicas, owned))
		}
	}
	if wl.kind == "StatefulSet" && !del && wl.replicas != nil && int(*wl.replicas) > owned {
		parts = append(parts, fmt.Sprintf("spec.replicas %d, %d live: the new pods are not predicted (their addresses cannot be known)", *wl.replicas, owned))
	}
	return strings.Join(parts, "; ")
}

func pods(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return strconv.Itoa(n) + " pods"
}

// names lists up to three pod names.
func names(ns []string) string {
	if len(ns) <= 3 {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ns[:3], ", "), len(ns)-3)
}

// samePod says whether two cached pods are the same in what meshscope
// reads of a pod.
func samePod(a, b *build.Pod) bool {
	ta, tb := a.PodTemplate, b.PodTemplate
	samePorts := ta.Ports == tb.Ports || (ta.Ports != nil && tb.Ports != nil && slices.Equal(*ta.Ports, *tb.Ports))
	sameProxy := ta.Injected == tb.Injected || (ta.Injected != nil && tb.Injected != nil && *ta.Injected == *tb.Injected)
	return maps.Equal(ta.Labels, tb.Labels) && ta.ServiceAccount == tb.ServiceAccount && samePorts && sameProxy &&
		ta.Controller == tb.Controller && a.Redirected == b.Redirected && a.IP == b.IP && a.InEndpoints == b.InEndpoints && a.NodeName == b.NodeName
}
