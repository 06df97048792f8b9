package build

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshscope/meshscope/model"
)

// workloadSelector is one ServiceEntry's workloadSelector, offered to the
// pods of every cluster (istiod's kube registries hand their ready pods to
// the ServiceEntry registry as workload instances).
type workloadSelector struct {
	namespace string
	labels    map[string]string
}

// Selectors is every workloadSelector of the snapshot's ServiceEntries;
// key changes whenever the list does (a cluster's selected pods are then
// found again).
type Selectors struct {
	list []workloadSelector
	Key  string
}

func SelectorsOf(ses []model.ServiceEntry) Selectors {
	var s Selectors
	var b strings.Builder
	for _, se := range ses {
		if se.WorkloadSelector == nil {
			continue
		}
		s.list = append(s.list, workloadSelector{namespace: se.Namespace, labels: se.WorkloadSelector})
		b.WriteString(se.Namespace)
		keys := make([]string, 0, len(se.WorkloadSelector))
		for k := range se.WorkloadSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString("\x00" + k + "=" + se.WorkloadSelector[k])
		}
		b.WriteString("\x01")
	}
	s.Key = b.String()
	return s
}

// SelectPods finds, for each selector, the pods of one cluster it picks:
// pods of its namespace that istiod's pod controller makes workload
// instances (ready, with an IP, not terminal or deleting), whose labels as
// istiod augments them include the selector's.
func SelectPods(v Caches, cluster, systemNetwork string, ix *NetworkIndex, sel Selectors) [][]model.Endpoint {
	if len(sel.list) == 0 || v.Pods == nil {
		return nil
	}
	out := make([][]model.Endpoint, len(sel.list))
	for _, p := range v.Pods() {
		if !p.InEndpoints {
			continue
		}
		var ep *model.Endpoint
		for i, s := range sel.list {
			if s.namespace != p.Namespace {
				continue
			}
			if ep == nil {
				e := podEndpoint(v, p, cluster, systemNetwork, ix)
				ep = &e
			}
			if model.SelectsEndpoint(s.labels, ep) {
				out[i] = append(out[i], *ep)
			}
		}
	}
	return out
}

// podEndpoint is a pod as a ServiceEntry's workload instance; its Ports
// are the pod's named container ports (mapped to ServiceEntry ports later).
func podEndpoint(v Caches, p *Pod, cluster, systemNetwork string, ix *NetworkIndex) model.Endpoint {
	e := model.Endpoint{Cluster: cluster, Address: p.IP.String(), Pod: p.Name, Node: p.NodeName, Labels: p.Labels,
		TLSMode: p.Labels[model.LabelTLSMode], Ready: true, Serving: true}
	e.Network, e.NetworkFrom = resolveNetwork(p.Labels[model.LabelNetwork], systemNetwork, ix, cluster, e.Address)
	e.Locality = v.podLocality(p.Labels, p.NodeName)
	if p.Ports != nil {
		e.Ports = *p.Ports
	}
	return e
}

// attachServiceEntries adds every ServiceEntry host to services, with the
// workloads istiod's ServiceEntry registry gives it (convertServices,
// convertServiceEntryToInstances, and the workloadSelector over
// WorkloadEntries and pods): inline endpoints when there is no selector;
// else the WorkloadEntries of every cluster and the pods of every cluster
// (selected, by cluster, aligned with SelectorsOf(ses)) of its namespace
// that match.
func attachServiceEntries(services map[string]*model.Service, ses []model.ServiceEntry, wes []model.WorkloadEntry, selected map[string][][]model.Endpoint) {
	// Oldest first, as istiod sorts them (sortServicesByCreationTime).
	order := make([]int, len(ses))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := ses[order[a]], ses[order[b]]
		if !x.Created.Equal(y.Created) {
			return x.Created.Before(y.Created)
		}
		if x.Name != y.Name {
			return x.Name < y.Name
		}
		return x.Namespace < y.Namespace
	})
	selIndex := 0
	selOf := make([]int, len(ses))
	for i, se := range ses {
		selOf[i] = -1
		if se.WorkloadSelector != nil {
			selOf[i] = selIndex
			selIndex++
		}
	}
	for _, i := range order {
		se := ses[i]
		eps := serviceEntryEndpoints(se, wes, selOf[i], selected)
		for _, h := range se.Hosts {
			svc := services[h]
			if svc == nil {
				svc = &model.Service{Hostname: h, Namespace: se.Namespace, Name: se.Name, Clusters: map[string]*model.ServiceInCluster{}}
				services[h] = svc
			}
			svc.ServiceEntries = append(svc.ServiceEntries, &model.ServiceEntryHost{
				Cluster: se.Cluster, Namespace: se.Namespace, Name: se.Name, Created: se.Created,
				Resolution: se.Resolution, Location: se.Location, Ports: se.Ports, ExportTo: se.ExportTo,
				WorkloadSelector: se.WorkloadSelector, Endpoints: eps,
			})
		}
	}
}

// serviceEntryEndpoints lists a ServiceEntry's workloads as endpoints with
// one port per ServiceEntry port.
func serviceEntryEndpoints(se model.ServiceEntry, wes []model.WorkloadEntry, selIdx int, selected map[string][][]model.Endpoint) []model.Endpoint {
	out := []model.Endpoint{}
	if se.WorkloadSelector == nil {
		for i, we := range se.Endpoints {
			e := workloadEntryEndpoint(we, se.Ports)
			e.Workload = "ServiceEntry/" + se.Name + "[" + strconv.Itoa(i) + "]"
			out = append(out, e)
		}
		return out
	}
	dns := se.Resolution == "DNS" || se.Resolution == "DNS_ROUND_ROBIN"
	selectWorkloadEntries(wes, se.Namespace, se.WorkloadSelector, dns, se.Ports, func(_ model.WorkloadEntry, e model.Endpoint) {
		out = append(out, e)
	})
	clusters := make([]string, 0, len(selected))
	for c := range selected {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	for _, c := range clusters {
		if selIdx < 0 || selIdx >= len(selected[c]) {
			continue
		}
		for _, p := range selected[c][selIdx] {
			p.Ports = serviceEntryPorts(se.Ports, portMap(p.Ports))
			out = append(out, p)
		}
	}
	return out
}

// workloadEntryEndpoint mirrors convertWorkloadEntryToWorkloadInstance:
// the entry's own network (istiod looks no further for it), locality,
// weight and labels, and istiod's tlsMode rule for WorkloadEntries.
func workloadEntryEndpoint(we model.WorkloadEntry, ports []model.ServicePort) model.Endpoint {
	e := model.Endpoint{Cluster: we.Cluster, Address: we.Address, Network: we.Network, Labels: we.Labels,
		TLSMode: we.TLSModeOf(), Locality: we.LocalityOf(), Weight: we.Weight, Ready: true, Serving: true,
		Ports: serviceEntryPorts(ports, we.Ports)}
	if we.Network != "" {
		e.NetworkFrom = model.NetworkFromWorkloadEntry
	}
	return e
}

// serviceWorkloadEntries mirrors the kube registry's
// serviceInstancesFromWorkloadInstances (PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES,
// on by default): a Kubernetes Service with a selector, neither headless nor
// ExternalName, also has for endpoints the WorkloadEntries of its own
// cluster and namespace whose labels (as istiod augments them) it selects —
// how VMs usually join a Kubernetes Service. istiod's config cluster hands
// its WorkloadEntries to its own kube registry, and every remote cluster's
// WorkloadEntry controller to that cluster's (multicluster.go). Unhealthy
// entries and entries whose address is a DNS name or a unix socket
// (DNSServiceEntryOnly) are left out. Each service port targets its
// numeric targetPort; a named targetPort targets the entry's port of that
// name, and an entry without one is left out of that port
// (serviceInstanceFromWorkloadInstance).
func serviceWorkloadEntries(svc *corev1.Service, wes []model.WorkloadEntry) []model.Endpoint {
	if len(wes) == 0 || len(svc.Spec.Selector) == 0 || svc.Spec.ClusterIP == corev1.ClusterIPNone ||
		svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Ports) == 0 {
		return nil
	}
	var out []model.Endpoint
	selectWorkloadEntries(wes, svc.Namespace, svc.Spec.Selector, false, nil, func(we model.WorkloadEntry, e model.Endpoint) {
		e.Ports = make([]model.EndpointPort, 0, len(svc.Spec.Ports))
		for _, sp := range svc.Spec.Ports {
			target := uint32(sp.Port)
			switch {
			case sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal > 0:
				target = uint32(sp.TargetPort.IntVal)
			case sp.TargetPort.Type == intstr.String && sp.TargetPort.StrVal != "":
				p, ok := we.Ports[sp.TargetPort.StrVal]
				if !ok || p == 0 {
					continue // the entry serves no port of that name
				}
				target = p
			}
			e.Ports = append(e.Ports, model.EndpointPort{Name: sp.Name, Port: int32(target), Protocol: string(sp.Protocol)})
		}
		if len(e.Ports) > 0 {
			out = append(out, e)
		}
	})
	return out
}

// selectWorkloadEntries calls f with each WorkloadEntry of namespace ns
// that sel selects (on its labels as istiod augments them), healthy, and
// with an IP (or no) address unless dnsOK — an entry whose address is a
// DNS name or a unix socket serves DNS ServiceEntries only
// (DNSServiceEntryOnly) — and the endpoint it is for ports, named
// WorkloadEntry/NAME. ServiceEntries' workloadSelectors and Kubernetes
// Services' selectors pick WorkloadEntries alike.
func selectWorkloadEntries(wes []model.WorkloadEntry, ns string, sel map[string]string, dnsOK bool, ports []model.ServicePort, f func(model.WorkloadEntry, model.Endpoint)) {
	for _, we := range wes {
		if we.Namespace != ns || we.Unhealthy {
			continue
		}
		if !dnsOK && we.Address != "" {
			if _, err := netip.ParseAddr(we.Address); err != nil {
				continue
			}
		}
		e := workloadEntryEndpoint(we, ports)
		if !model.SelectsEndpoint(sel, &e) {
			continue
		}
		e.Workload = "WorkloadEntry/" + we.Name
		f(we, e)
	}
}

func portMap(ps []model.EndpointPort) map[string]uint32 {
	if len(ps) == 0 {
		return nil
	}
	m := make(map[string]uint32, len(ps))
	for _, p := range ps {
		m[p.Name] = uint32(p.Port)
	}
	return m
}

// serviceEntryPorts mirrors convertWorkloadInstanceToServiceInstance's
// target port: the workload's port of the same name, else the
// ServiceEntry port's targetPort, else its number.
func serviceEntryPorts(ports []model.ServicePort, workload map[string]uint32) []model.EndpointPort {
	out := make([]model.EndpointPort, 0, len(ports))
	for _, sp := range ports {
		target := uint32(sp.Port)
		if p, ok := workload[sp.Name]; ok && p > 0 {
			target = p
		} else if t, err := strconv.ParseUint(sp.TargetPort, 10, 32); err == nil && t > 0 {
			target = uint32(t)
		}
		out = append(out, model.EndpointPort{Name: sp.Name, Port: int32(target), Protocol: sp.Protocol})
	}
	return out
}

// serviceSource says where a service's hostname comes from.
func serviceSource(svc *model.Service) model.ServiceSource {
	kube := len(svc.Clusters) > 0
	switch {
	case kube && len(svc.ServiceEntries) > 0:
		return model.SourceBoth
	case kube:
		return model.SourceKube
	}
	return model.SourceServiceEntry
}

// exportToAnnotation reads a Service's networking.istio.io/exportTo
// annotation as istiod's ConvertService does: namespaces (".", "*", "~" or
// names) separated by commas.
func exportToAnnotation(ann map[string]string) []string {
	v := ann[model.AnnotationExportTo]
	if v == "" {
		return nil
	}
	var out []string
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}
