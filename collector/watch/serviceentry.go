package watch

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/model"
)

// Services declared by Istio config: ServiceEntries, and the WorkloadEntries
// (or Pods) their workloadSelector picks. istiod's ServiceEntry registry
// (pilot/pkg/serviceregistry/serviceentry) reads them from its config
// cluster; WorkloadEntries are also read from the other clusters
// (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY, on by default), and Pods of
// every cluster are offered to the config cluster's workloadSelectors
// (PILOT_ENABLE_SERVICEENTRY_SELECT_PODS, on by default).

var (
	gvrServiceEntries  = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	gvrWorkloadEntries = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "workloadentries"}
)

const (
	resServiceEntries  = "serviceentries"
	resWorkloadEntries = "workloadentries"
)

// ServiceEntries parses the ServiceEntry cache of one (config) cluster:
// the Registry puts every config cluster's together before any part is
// built, since their selectors pick pods of every cluster.
func (w *Watcher) ServiceEntries(cluster string) []model.ServiceEntry {
	return readIstioConfig(w.serviceEntriesInf, cluster, w.ConfigRevision(), parseServiceEntry)
}

// WorkloadEntries parses the WorkloadEntry cache of one cluster: istiod
// offers them to the ServiceEntries and Services of every cluster.
func (w *Watcher) WorkloadEntries(cluster string) []model.WorkloadEntry {
	return readIstioConfig(w.workloadEntriesInf, cluster, w.ConfigRevision(), parseWorkloadEntry)
}

func parseServiceEntry(cluster string, u *unstructured.Unstructured) model.ServiceEntry {
	se := model.ServiceEntry{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time,
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
			sp := model.ServicePort{Port: int32(toUint32(m["number"]))}
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

func parseWorkloadEntry(cluster string, u *unstructured.Unstructured) model.WorkloadEntry {
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
	if on, _ := strconv.ParseBool(u.GetAnnotations()[model.AnnotationHealthChecks]); on {
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

func workloadEntrySpec(m map[string]any) model.WorkloadEntry {
	var we model.WorkloadEntry
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
