package collector

import "github.com/meshscope/meshscope/model"

// readerRole is what a remote secret's user must be allowed in its
// cluster: get, list and watch of every resource of istio's reader
// ClusterRole, which istioctl create-remote-secret binds the
// istio-reader-service-account to. Read from the istio module's
// manifests/charts/istio-control/istio-discovery/templates/reader-clusterrole.yaml
// (istio.io/istio@v0.0.0-20260827124520-eed52ebb66ad, the lab's istiod),
// its get/list/watch rules in the chart's order; the rules that grant
// create (tokenreviews, subjectaccessreviews, serviceexports) are not
// reads and are left out, as are the istiodRemote-only ones. The chart's
// MCS API group is its default, multicluster.x-k8s.io. One place: the
// credential test checks these and nothing else.
var readerRole = []struct {
	groups    []string
	resources []string
}{
	{groups: []string{"config.istio.io", "security.istio.io", "networking.istio.io", "authentication.istio.io",
		"rbac.istio.io", "telemetry.istio.io", "extensions.istio.io"}, resources: []string{"*"}},
	{groups: []string{""}, resources: []string{"endpoints", "pods", "services", "nodes", "replicationcontrollers",
		"namespaces", "secrets", "configmaps"}},
	{groups: []string{"networking.istio.io"}, resources: []string{"workloadentries"}},
	{groups: []string{"networking.x-k8s.io", "gateway.networking.k8s.io"}, resources: []string{"gateways"}},
	{groups: []string{"apiextensions.k8s.io"}, resources: []string{"customresourcedefinitions"}},
	{groups: []string{"discovery.k8s.io"}, resources: []string{"endpointslices"}},
	{groups: []string{"multicluster.x-k8s.io"}, resources: []string{"serviceexports", "serviceimports"}},
	{groups: []string{"apps"}, resources: []string{"replicasets"}},
}

// readVerbs are the verbs the reader role grants on each of its resources.
var readVerbs = []string{"get", "list", "watch"}

// readerPermissions is readerRole as one permission per (group,
// resource, verb), in the role's order.
func readerPermissions() []model.Permission {
	var out []model.Permission
	for _, r := range readerRole {
		for _, g := range r.groups {
			for _, res := range r.resources {
				for _, v := range readVerbs {
					out = append(out, model.Permission{Group: g, Resource: res, Verb: v})
				}
			}
		}
	}
	return out
}
