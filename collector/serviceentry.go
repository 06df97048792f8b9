package collector

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Services declared by Istio config: ServiceEntries, and the WorkloadEntries
// (or Pods) their workloadSelector picks. istiod's ServiceEntry registry
// (pilot/pkg/serviceregistry/serviceentry) reads them from its config
// cluster; WorkloadEntries are also read from the other clusters
// (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY, on by default), and Pods of
// every cluster are offered to the config cluster's workloadSelectors
// (PILOT_ENABLE_SERVICEENTRY_SELECT_PODS, on by default).

// ServiceEntry is an Istio ServiceEntry as istiod's registry reads it.
type ServiceEntry struct {
	// Cluster is the config cluster it was read from.
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	Hosts     []string  `json:"hosts"`
	Addresses []string  `json:"addresses,omitempty"`
	// Ports: name, number (port) and targetPort.
	Ports []ServicePort `json:"ports,omitempty"`
	// Location is MESH_EXTERNAL (the default) or MESH_INTERNAL.
	Location string `json:"location"`
	// Resolution is NONE (the default), STATIC, DNS, DNS_ROUND_ROBIN or
	// DYNAMIC_DNS.
	Resolution string   `json:"resolution"`
	ExportTo   []string `json:"exportTo,omitempty"`
	// WorkloadSelector picks WorkloadEntries and Pods of its namespace;
	// without one, Endpoints are the inline endpoints.
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	Endpoints        []WorkloadEntry   `json:"endpoints,omitempty"`
}

// WorkloadEntry is an Istio WorkloadEntry (or a ServiceEntry's inline
// endpoint): a workload outside Kubernetes, e.g. a VM.
type WorkloadEntry struct {
	// Cluster is the cluster it was read from (for an inline endpoint, its
	// ServiceEntry's).
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Address is an IP, a DNS name (DNS ServiceEntries only), "unix://..."
	// or empty (reached only through its network's gateway).
	Address string            `json:"address,omitempty"`
	Ports   map[string]uint32 `json:"ports,omitempty"`
	// Labels are spec.labels merged with metadata.labels, metadata winning
	// (istiod's ConvertWorkloadEntry).
	Labels         map[string]string `json:"labels,omitempty"`
	Network        string            `json:"network,omitempty"`
	Locality       string            `json:"locality,omitempty"`
	Weight         uint32            `json:"weight,omitempty"`
	ServiceAccount string            `json:"serviceAccount,omitempty"`
	// Unhealthy: health checks are on for it (annotation
	// proxy.istio.io/health-checks-enabled) and its status has no
	// Healthy=True condition: istiod leaves it out (isHealthy).
	Unhealthy bool `json:"unhealthy,omitempty"`
}

var (
	gvrServiceEntries  = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	gvrWorkloadEntries = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "workloadentries"}
)

const (
	resServiceEntries  = "serviceentries"
	resWorkloadEntries = "workloadentries"
	// healthChecksAnnotation turns on WorkloadEntry health checks.
	healthChecksAnnotation = "proxy.istio.io/health-checks-enabled"
)

// TLSModeOf mirrors istiod's getTLSModeFromWorkloadEntry: the
// security.istio.io/tlsMode label when present, else "istio" when the entry
// names a service account (its proxy then has an Istio certificate), else
// "disabled".
func (we WorkloadEntry) TLSModeOf() string {
	if v, ok := we.Labels[LabelTLSMode]; ok {
		return v
	}
	if we.ServiceAccount != "" {
		return "istio"
	}
	return "disabled"
}

// LocalityOf is the entry's locality, else its topology.istio.io/locality
// or istio-locality label with "." read as "/" (istiod's
// convertWorkloadEntryToWorkloadInstance with GetLocalityLabel and
// SanitizeLocalityLabel).
func (we WorkloadEntry) LocalityOf() string {
	if we.Locality != "" {
		return we.Locality
	}
	return podLabelLocality(we.Labels)
}

// serviceEntries reads the ServiceEntry cache of one (config) cluster.
func (w *watcher) serviceEntries(cluster string) []ServiceEntry {
	return readIstioConfig(w.serviceEntriesInf, cluster, parseServiceEntry)
}

// workloadEntries reads the WorkloadEntry cache of one cluster.
func (w *watcher) workloadEntries(cluster string) []WorkloadEntry {
	return readIstioConfig(w.workloadEntriesInf, cluster, parseWorkloadEntry)
}

func parseServiceEntry(cluster string, u *unstructured.Unstructured) ServiceEntry {
	se := ServiceEntry{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time,
		Location: "MESH_EXTERNAL", Resolution: "NONE"}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	se.Hosts = stringList(spec["hosts"])
	se.Addresses = stringList(spec["addresses"])
	se.ExportTo = stringList(spec["exportTo"])
	if s, ok := spec["location"].(string); ok && s != "" {
		se.Location = s
	}
	if s, ok := spec["resolution"].(string); ok && s != "" {
		se.Resolution = s
	}
	if ports, ok := spec["ports"].([]any); ok {
		for _, p := range ports {
			m, _ := p.(map[string]any)
			sp := ServicePort{Port: int32(toUint32(m["number"]))}
			sp.Name, _ = m["name"].(string)
			sp.Protocol, _ = m["protocol"].(string)
			if t := toUint32(m["targetPort"]); t != 0 {
				sp.TargetPort = strconv.FormatUint(uint64(t), 10)
			}
			se.Ports = append(se.Ports, sp)
		}
	}
	if sel, ok := spec["workloadSelector"].(map[string]any); ok {
		se.WorkloadSelector = stringMap(sel["labels"])
		if se.WorkloadSelector == nil {
			se.WorkloadSelector = map[string]string{} // present but empty: selects every workload
		}
	}
	if eps, ok := spec["endpoints"].([]any); ok {
		for i, e := range eps {
			m, _ := e.(map[string]any)
			we := workloadEntrySpec(m)
			we.Cluster, we.Namespace, we.Name = cluster, se.Namespace, se.Name+"-"+strconv.Itoa(i)
			se.Endpoints = append(se.Endpoints, we)
		}
	}
	return se
}

func parseWorkloadEntry(cluster string, u *unstructured.Unstructured) WorkloadEntry {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	we := workloadEntrySpec(spec)
	we.Cluster, we.Namespace, we.Name = cluster, u.GetNamespace(), u.GetName()
	if meta := u.GetLabels(); len(meta) > 0 {
		merged := make(map[string]string, len(we.Labels)+len(meta))
		for k, v := range we.Labels {
			merged[k] = v
		}
		for k, v := range meta {
			merged[k] = v
		}
		we.Labels = merged
	}
	if on, _ := strconv.ParseBool(u.GetAnnotations()[healthChecksAnnotation]); on {
		// Unhealthy until a Healthy=True condition says otherwise
		// (status.GetBoolConditionFromSpec with default false).
		we.Unhealthy = true
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Healthy" {
				we.Unhealthy = m["status"] != "True"
			}
		}
	}
	return we
}

func workloadEntrySpec(m map[string]any) WorkloadEntry {
	var we WorkloadEntry
	we.Address, _ = m["address"].(string)
	we.Network, _ = m["network"].(string)
	we.Locality, _ = m["locality"].(string)
	we.ServiceAccount, _ = m["serviceAccount"].(string)
	we.Weight = toUint32(m["weight"])
	we.Labels = stringMap(m["labels"])
	if ports, ok := m["ports"].(map[string]any); ok {
		we.Ports = make(map[string]uint32, len(ports))
		for k, v := range ports {
			we.Ports[k] = toUint32(v)
		}
	}
	return we
}

func stringList(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}

// toUint32 reads a number of an unstructured object (int64 from JSON, or
// float64 from YAML decoded elsewhere); anything else is 0.
func toUint32(v any) uint32 {
	switch n := v.(type) {
	case int64:
		if n > 0 && n <= 1<<32-1 {
			return uint32(n)
		}
	case float64:
		if n > 0 && n <= 1<<32-1 {
			return uint32(n)
		}
	case int:
		if n > 0 && int64(n) <= 1<<32-1 {
			return uint32(n)
		}
	}
	return 0
}
