package demo

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/model"
)

// The demo's ambient part: namespace ambient runs in ambient mode, the
// demo's control plane runs ambient multi-network (it serves ztunnels the
// workload API, xds.go), the mesh config makes services labelled
// istio.io/global=true global (the ambient profile's serviceScopeConfigs),
// and network1 and network2 each have an ambient east-west Gateway
// (Gateway API, class istio-east-west) in the cluster that holds their
// sidecar east-west gateway.

const (
	ambientNamespace = "ambient"
	globalLabel      = "istio.io/global"
	// ambientGateway is the Gateway's name, as gen-eastwest-gateway.sh
	// --ambient calls it (next to the sidecar gateway's Service).
	ambientGateway = "istio-eastwestgateway"
	// ambientMeshConfig is what ConfigMap istio of cluster1 holds.
	ambientMeshConfig = kubesim.AmbientServiceScopes
)

// newDynamic is a cluster's dynamic client: Gateway API Gateways and the
// Istio config kinds the collector lists (cluster1 holds istioconfig.go's).
func newDynamic() *dynamicfake.FakeDynamicClient { return kubesim.NewFakeDynamic() }

// seedAmbient writes the mesh config (in the control plane's cluster) and
// the cluster's ambient east-west Gateway.
func (c *cluster) seedAmbient(ctx context.Context) error {
	if c.def.ID == "cluster1" {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: model.MeshConfigMapName(""), Namespace: systemNamespace},
			Data: map[string]string{"mesh": ambientMeshConfig}}
		if _, err := c.client.CoreV1().ConfigMaps(systemNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if c.def.AmbientGatewayIP == "" {
		return nil
	}
	return kubesim.AmbientEastWestGateway(ctx, c.dyn, systemNamespace, ambientGateway, c.def.Network, c.def.AmbientGatewayIP)
}

// namespaceLabels are a demo namespace's labels in cluster def.
func namespaceLabels(def clusterDef, ns string) map[string]string {
	switch ns {
	case systemNamespace:
		return map[string]string{model.LabelNetwork: def.Network}
	case ambientNamespace:
		return map[string]string{model.LabelDataplaneMode: "ambient"}
	}
	return nil
}

// ambientPod says whether s's pods in cluster id run in ambient mode.
func (s svcDef) ambientPod(id string) bool { return s.Ambient && !s.Sidecar[id] }
