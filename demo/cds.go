package demo

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rawbufferv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/raw_buffer/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshscope/meshscope/analysis/horizon"
)

// The demo's CDS is shaped like istiod's for a sidecar, as far as the
// proxy-config view shows it: each outbound cluster is EDS with istiod's
// auto-mTLS transport socket matches (ISTIO_MUTUAL to endpoints labelled
// tlsMode=istio, plaintext to the rest), and the three clusters istiod
// always adds — BlackHoleCluster, PassthroughCluster and
// InboundPassthroughCluster — which the listeners refer to.

// outboundEDSCluster is one outbound|PORT||HOST cluster.
func outboundEDSCluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		ConnectTimeout:       durationpb.New(10 * time.Second),
		EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{
			ServiceName: name,
			EdsConfig:   &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3, ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}},
		},
		TransportSocketMatches: autoMTLSMatches(),
		// istiod's load balancing defaults (horizon.IstiodLB): least
		// request, no locality weighting, panic threshold 0.
		LbPolicy:       clusterv3.Cluster_LEAST_REQUEST,
		CommonLbConfig: &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: horizon.IstiodLB.PanicThreshold}},
	}
}

// autoMTLSMatches are istiod's tlsMode-istio / tlsMode-disabled matches.
func autoMTLSMatches() []*clusterv3.Cluster_TransportSocketMatch {
	istio, _ := structpb.NewStruct(map[string]any{"tlsMode": "istio"})
	mtls := &tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: "default",
			SdsConfig: &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3, ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}}},
		AlpnProtocols: []string{"istio-peer-exchange", "istio"},
	}}
	return []*clusterv3.Cluster_TransportSocketMatch{
		{Name: "tlsMode-istio", Match: istio, TransportSocket: &corev3.TransportSocket{
			Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(mtls)}}},
		{Name: "tlsMode-disabled", Match: &structpb.Struct{}, TransportSocket: &corev3.TransportSocket{
			Name: "envoy.transport_sockets.raw_buffer", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&rawbufferv3.RawBuffer{})}}},
	}
}

// defaultClusters are the clusters istiod sends every sidecar.
func defaultClusters() []types.Resource {
	origDst := func(name string) *clusterv3.Cluster {
		return &clusterv3.Cluster{
			Name:                 name,
			ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST},
			ConnectTimeout:       durationpb.New(10 * time.Second),
			LbPolicy:             clusterv3.Cluster_CLUSTER_PROVIDED,
		}
	}
	inbound := origDst(inboundPassthroughCluster)
	inbound.UpstreamBindConfig = &corev3.BindConfig{SourceAddress: &corev3.SocketAddress{
		Address: "127.0.0.6", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 0}}}
	return []types.Resource{
		&clusterv3.Cluster{
			Name:                 blackHoleCluster,
			ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
			ConnectTimeout:       durationpb.New(10 * time.Second),
		},
		origDst(passthroughCluster),
		inbound,
	}
}
