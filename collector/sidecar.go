package collector

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Sidecar is the part of an Istio Sidecar resource that decides which
// services a proxy gets (its SidecarScope): the egress listeners' hosts,
// "namespace/dnsName" ("*" and "." namespaces, "*" and "*.suffix" names,
// "~namespace/dnsName" excluding), each listener limited to its port when
// it has one. istiod reads Sidecars from its config cluster.
type Sidecar struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	// WorkloadSelector limits it to proxies with these labels (nil: every
	// proxy of its namespace, or of the mesh in the root namespace).
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	// Egress is empty when the Sidecar sets none (istiod then imports
	// "*/*").
	Egress []SidecarEgress `json:"egress,omitempty"`
}

// SidecarEgress is one egress listener.
type SidecarEgress struct {
	// Port is the listener's port number (0: none); Protocol its protocol.
	Port     uint32   `json:"port,omitempty"`
	Protocol string   `json:"protocol,omitempty"`
	Hosts    []string `json:"hosts"`
}

var gvrSidecars = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "sidecars"}

const resSidecars = "sidecars"

func parseSidecar(cluster string, u *unstructured.Unstructured) Sidecar {
	s := Sidecar{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
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
		l := SidecarEgress{Hosts: stringList(m["hosts"])}
		if port, ok := m["port"].(map[string]any); ok {
			l.Port = toUint32(port["number"])
			l.Protocol, _ = port["protocol"].(string)
		}
		s.Egress = append(s.Egress, l)
	}
	return s
}

// VirtualService is the part of an Istio VirtualService that imports
// services into a Sidecar scope: its hosts, the gateways it is bound to,
// its exportTo, and where its routes send traffic. istiod reads
// VirtualServices from its config cluster.
type VirtualService struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	Hosts     []string  `json:"hosts,omitempty"`
	// Gateways are spec.gateways (empty: "mesh", the sidecars).
	Gateways []string `json:"gateways,omitempty"`
	ExportTo []string `json:"exportTo,omitempty"`
	// Destinations are the route destinations (http, tls, tcp; http
	// mirrors too), hosts as written.
	Destinations []VSDestination `json:"destinations,omitempty"`
}

// VSDestination is one destination of a VirtualService route.
type VSDestination struct {
	Host string `json:"host"`
	// Port is the destination port number (0: none, every port).
	Port uint32 `json:"port,omitempty"`
	// SourceNamespaces are the sourceNamespace of the http route's
	// matches (empty: any source).
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
}

var gvrVirtualServices = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

const resVirtualServices = "virtualservices"

func parseVirtualService(cluster string, u *unstructured.Unstructured) VirtualService {
	v := VirtualService{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
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
		out := VSDestination{Host: h, SourceNamespaces: sources}
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
