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
