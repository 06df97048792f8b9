package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// istioConfigProblems finds what in the mesh config and the ServiceEntries
// makes istiod send fewer endpoints than their author likely meant.
func istioConfigProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, mc := range snap.MeshConfigs {
		if mc.Error != "" {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemMeshConfig, Cluster: mc.Cluster,
				Sentence: fmt.Sprintf("the mesh config of %s's istiod (%s) is not usable: %s — istiod refuses it too and keeps its previous one; meshscope predicts with istiod's defaults", mc.Cluster, mc.Source, mc.Error)})
		}
	}
	for _, we := range snap.WorkloadEntries {
		if we.Unhealthy {
			ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemWorkloadEntryUnhealthy, Cluster: we.Cluster,
				Sentence: fmt.Sprintf("WorkloadEntry %s/%s in %s has health checks on (%s) and no Healthy=True condition: istiod leaves it out of every ServiceEntry", we.Namespace, we.Name, we.Cluster, model.AnnotationHealthChecks)})
		}
	}
	for _, svc := range snap.Services {
		for _, se := range svc.ServiceEntries {
			if se.WorkloadSelector != nil && len(se.Endpoints) == 0 && (se.Resolution == "STATIC" || se.Resolution == "NONE") {
				ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemServiceEntryNoWorkloads, Cluster: se.Cluster, Service: svc.Hostname,
					Sentence: fmt.Sprintf("ServiceEntry %s/%s selects no WorkloadEntry and no ready pod (workloadSelector %s in namespace %s): istiod sends no endpoints for %s", se.Namespace, se.Name, labelString(se.WorkloadSelector), se.Namespace, svc.Hostname)})
			}
			if len(svc.Clusters) == 0 || se.Namespace != svc.Namespace {
				continue
			}
			// A Kubernetes Service of the same hostname and namespace wins:
			// the ServiceEntry's workloads join its endpoints only on ports
			// whose name matches (BuildClusterLoadAssignment filters by
			// service port name).
			for _, sp := range se.Ports {
				for _, kp := range svc.Ports {
					if kp.Port == sp.Port && kp.Name != sp.Name {
						ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemServiceEntryPortName, Cluster: se.Cluster, Service: svc.Hostname,
							Objects:  []model.ObjectRef{{Cluster: se.Cluster, Kind: "ServiceEntry", Namespace: se.Namespace, Name: se.Name}},
							Sentence: fmt.Sprintf("ServiceEntry %s/%s port %d is named %q but the Kubernetes Service %s names it %q: istiod uses the Service's port, so the ServiceEntry's %d workload(s) get no traffic on it — use the same port name", se.Namespace, se.Name, sp.Port, sp.Name, svc.Hostname, kp.Name, len(se.Endpoints))})
					}
				}
			}
		}
	}
	return ps
}

func labelString(m map[string]string) string {
	if len(m) == 0 {
		return "{} (every workload)"
	}
	var l []string
	for k, v := range m {
		l = append(l, k+"="+v)
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}
