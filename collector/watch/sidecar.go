package watch

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/model"
)

var gvrSidecars = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "sidecars"}

const resSidecars = "sidecars"

func parseSidecar(cluster string, u *unstructured.Unstructured) model.Sidecar {
	s := model.Sidecar{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if sel, ok := spec["workloadSelector"].(map[string]any); ok {
		s.WorkloadSelector = stringMap(sel["labels"])
		if s.WorkloadSelector == nil {
			s.WorkloadSelector = map[string]string{}
		}
	}
	egress, _ := spec["egress"].([]any)
	for _, e := range egress {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		l := model.SidecarEgress{Hosts: stringList(m["hosts"])}
		if port, ok := m["port"].(map[string]any); ok {
			l.Port = toUint32(port["number"])
			l.Protocol, _ = port["protocol"].(string)
		}
		s.Egress = append(s.Egress, l)
	}
	return s
}

var gvrVirtualServices = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

const resVirtualServices = "virtualservices"

func parseVirtualService(cluster string, u *unstructured.Unstructured) model.VirtualService {
	v := model.VirtualService{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	v.Hosts, v.Gateways, v.ExportTo = stringList(spec["hosts"]), stringList(spec["gateways"]), stringList(spec["exportTo"])
	dest := func(d any, sources []string) {
		m, ok := d.(map[string]any)
		if !ok {
			return
		}
		h, _ := m["host"].(string)
		if h == "" {
			return
		}
		out := model.VSDestination{Host: h, SourceNamespaces: sources}
		if p, ok := m["port"].(map[string]any); ok {
			out.Port = toUint32(p["number"])
		}
		v.Destinations = append(v.Destinations, out)
	}
	routes := func(list any, sources []string) {
		rs, _ := list.([]any)
		for _, r := range rs {
			if m, ok := r.(map[string]any); ok {
				dest(m["destination"], sources)
			}
		}
	}
	https, _ := spec["http"].([]any)
	for _, h := range https {
		m, ok := h.(map[string]any)
		if !ok {
			continue
		}
		// virtualServiceDestinationsFilteredBySourceNamespace: a route
		// whose matches name source namespaces serves those only.
		var sources []string
		matches, _ := m["match"].([]any)
		for _, mt := range matches {
			if mm, ok := mt.(map[string]any); ok {
				if ns, _ := mm["sourceNamespace"].(string); ns != "" {
					sources = append(sources, ns)
				}
			}
		}
		routes(m["route"], sources)
		dest(m["mirror"], sources)
		mirrors, _ := m["mirrors"].([]any)
		for _, mr := range mirrors {
			if mm, ok := mr.(map[string]any); ok {
				dest(mm["destination"], sources)
			}
		}
	}
	for _, key := range []string{"tcp", "tls"} {
		list, _ := spec[key].([]any)
		for _, t := range list {
			if m, ok := t.(map[string]any); ok {
				routes(m["route"], nil)
			}
		}
	}
	return v
}
