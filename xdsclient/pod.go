package xdsclient

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/model"
)

const (
	istioMetaPrefix     = "ISTIO_META_"
	istioMetaJSONPrefix = "ISTIO_METAJSON_"
)

// ProxyContainerName is the container the sidecar injector adds (and a
// ztunnel or gateway pod runs its proxy in).
const ProxyContainerName = "istio-proxy"

// ViewpointFromPod copies a real Pod's identity — IP, labels, namespace,
// service account and the ISTIO_META_* env of its istio-proxy container, as
// the istio agent turns that env into node metadata — so the stream sees
// exactly what that Pod's Envoy gets. clusterID is the cluster the Pod was
// read from; an ISTIO_META_CLUSTER_ID / NETWORK in the env still apply when
// the viewpoint has none, like on the real proxy.
func ViewpointFromPod(pod *corev1.Pod, clusterID string) (Viewpoint, error) {
	if pod == nil {
		return Viewpoint{}, fmt.Errorf("no pod")
	}
	vp := Viewpoint{
		Cluster:        clusterID,
		Namespace:      pod.Namespace,
		PodName:        pod.Name,
		Labels:         maps.Clone(pod.Labels),
		ServiceAccount: pod.Spec.ServiceAccountName,
		IP:             pod.Status.PodIP,
		NodeType:       Sidecar,
		Pod:            &PodRef{Namespace: pod.Namespace, Name: pod.Name, Cluster: clusterID},
		Metadata:       map[string]string{},
	}
	// The injector does not put pod-template-hash into node labels; neither do we.
	delete(vp.Labels, "pod-template-hash")
	if vp.IP == "" {
		return vp, fmt.Errorf("pod %s/%s has no IP yet (phase %s)", pod.Namespace, pod.Name, pod.Status.Phase)
	}
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) > 0 {
		vp.Metadata["INSTANCE_IPS"] = strings.Join(ips, ",")
	}
	proxy := ProxyContainer(pod)
	if proxy == nil {
		return vp, nil // not injected: identity without the agent's env
	}
	if slices.Contains(proxy.Args, string(Router)) {
		vp.NodeType = Router // a gateway's agent runs "proxy router"
	}
	for _, e := range proxy.Env {
		val, ok := envValue(pod, e)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(e.Name, istioMetaJSONPrefix):
			var m map[string]any
			if json.Unmarshal([]byte(val), &m) != nil {
				continue
			}
			for k, v := range m {
				if s, ok := v.(string); ok {
					vp.Metadata[k] = s
				}
			}
		case strings.HasPrefix(e.Name, istioMetaPrefix):
			vp.Metadata[strings.TrimPrefix(e.Name, istioMetaPrefix)] = val
		}
	}
	if n := vp.Metadata["NETWORK"]; n != "" {
		vp.Network = n
	} else if n := pod.Labels[model.LabelNetwork]; n != "" {
		vp.Network = n
	} else {
		// The real proxy would send no NETWORK: say so, rather than leaving
		// the viewpoint "undecided".
		vp.NoNetwork = true
	}
	if vp.Cluster == "" {
		vp.Cluster = vp.Metadata["CLUSTER_ID"]
	}
	if r := vp.Metadata["REQUESTED_NETWORK_VIEW"]; r != "" {
		vp.RequestedNetworkView = strings.Split(r, ",")
	}
	return vp, nil
}

// envValue resolves literal values and the downward-API fields the injector
// uses; env from ConfigMaps or Secrets is skipped (meshscope reads no secrets).
func envValue(pod *corev1.Pod, e corev1.EnvVar) (string, bool) {
	if e.ValueFrom == nil {
		return e.Value, true
	}
	f := e.ValueFrom.FieldRef
	if f == nil {
		return "", false
	}
	switch f.FieldPath {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, true
	case "spec.nodeName":
		return pod.Spec.NodeName, true
	case "status.podIP":
		return pod.Status.PodIP, true
	case "status.hostIP":
		return pod.Status.HostIP, true
	}
	if k, ok := strings.CutPrefix(f.FieldPath, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], true
	}
	if k, ok := strings.CutPrefix(f.FieldPath, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], true
	}
	return "", false
}

// ProxyContainer is a pod's istio-proxy container (the name the injector,
// and the gateway and ztunnel charts, give the proxy): a container, else a
// native sidecar init container; nil when the pod runs none.
func ProxyContainer(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == ProxyContainerName {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == ProxyContainerName {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
