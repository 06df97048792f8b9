package model

// ProblemKind is the stable code of a problem doctor and the UI report
// (analysis/explain Diagnose, with analysis/ambient's problems). Scripts
// read it in doctor's JSON: a code, once released, keeps its meaning. This
// is the one list; the UI's badges are keyed on it (tui/doctor.go).
type ProblemKind string

// Problems of the clusters and their credentials.
const (
	// ProblemClusterState: a cluster is not watched (error, timeout).
	ProblemClusterState ProblemKind = "cluster-state"
	// ProblemClusterWarning: a cluster is watched with a warning (a
	// permission missing).
	ProblemClusterWarning ProblemKind = "cluster-warning"
	// ProblemRemoteSecret: a cluster known only from a remote secret
	// cannot be reached with that secret's kubeconfig.
	ProblemRemoteSecret ProblemKind = "remote-secret"
	// ProblemRemoteSecretDuplicate: two remote secrets declare one cluster
	// (or one ID twice).
	ProblemRemoteSecretDuplicate ProblemKind = "remote-secret-duplicate"
	// ProblemRemoteSecretClusterID: a remote secret's key is not the ID
	// the cluster's own istiod uses.
	ProblemRemoteSecretClusterID ProblemKind = "remote-secret-cluster-id"
	// ProblemRemoteSecretRBAC: a remote secret's user may not read what
	// istiod reads.
	ProblemRemoteSecretRBAC ProblemKind = "remote-secret-rbac"
	// ProblemRemoteSecretExpiry: a remote secret's token or client
	// certificate has expired, or expires within a week.
	ProblemRemoteSecretExpiry ProblemKind = "remote-secret-expiry"
	// ProblemRemoteSecretServer: a remote secret names an API server
	// address that istiod's cluster cannot reach by its form (loopback,
	// localhost, the in-cluster name, a minikube or Docker host name).
	ProblemRemoteSecretServer ProblemKind = "remote-secret-server"
	// ProblemRemoteSecretRefused: istiod refuses to load a remote secret's
	// kubeconfig (an exec plugin, token file, certificate file or auth
	// provider it does not allow; one that does not parse or validate).
	ProblemRemoteSecretRefused ProblemKind = "remote-secret-refused"
	// ProblemRemoteSecretTLS: a remote secret's CA does not verify its
	// API server, or it skips verification.
	ProblemRemoteSecretTLS ProblemKind = "remote-secret-tls"
	// ProblemRemoteSecretUnauthorized: the API server refuses a remote
	// secret's credential (revoked, expired, another cluster's).
	ProblemRemoteSecretUnauthorized ProblemKind = "remote-secret-unauthorized"
	// ProblemRemoteSecretUnreachable: meshscope cannot reach a remote
	// secret's API server.
	ProblemRemoteSecretUnreachable ProblemKind = "remote-secret-unreachable"
	// ProblemRemoteSecretStale: istiod still runs an older version of a
	// remote secret than the one written.
	ProblemRemoteSecretStale ProblemKind = "remote-secret-stale"
	// ProblemIstiodSecretBug: an istiod runs a version with a known
	// remote-secret bug that the mesh's secrets hit.
	ProblemIstiodSecretBug ProblemKind = "istiod-remote-secret-bug"
)

// Problems of the control planes.
const (
	// ProblemControlPlaneMissingCluster: a primary's istiod does not read
	// a cluster of the mesh (no remote secret for it).
	ProblemControlPlaneMissingCluster ProblemKind = "control-plane-missing-cluster"
	// ProblemIstiodDisagrees: istiod's own view (/debug/clusterz,
	// networkz) differs from what meshscope reads.
	ProblemIstiodDisagrees ProblemKind = "istiod-disagrees"
	// ProblemIstiodUnreachable: meshscope could not reach a control plane
	// to compare what it sends.
	ProblemIstiodUnreachable ProblemKind = "istiod-unreachable"
	// ProblemRootCA: a cluster's root bundle cannot be read.
	ProblemRootCA ProblemKind = "root-ca"
	// ProblemRootCAExpiry: a root certificate expires soon, or has.
	ProblemRootCAExpiry ProblemKind = "root-ca-expiry"
	// ProblemRootCAMismatch: two clusters' bundles share no root:
	// cross-cluster mTLS fails.
	ProblemRootCAMismatch ProblemKind = "root-ca-mismatch"
	// ProblemConfigSkew: primaries hold different Istio config for the
	// same service.
	ProblemConfigSkew ProblemKind = "config-skew"
	// ProblemMeshConfig: a mesh config (or meshNetworks) does not parse.
	ProblemMeshConfig ProblemKind = "mesh-config"
)

// Problems of the east-west gateways and networks.
const (
	// ProblemGatewayNoAddress: a gateway Service has no address.
	ProblemGatewayNoAddress ProblemKind = "gateway-no-address"
	// ProblemGatewayNotReady: a gateway Service has no ready endpoint.
	ProblemGatewayNotReady ProblemKind = "gateway-not-ready"
	// ProblemGatewayLBPending: a gateway's load balancer stays pending.
	ProblemGatewayLBPending ProblemKind = "gateway-lb-pending"
	// ProblemGatewayPort: a gateway Service does not expose the port its
	// network label asks for.
	ProblemGatewayPort ProblemKind = "gateway-port"
	// ProblemGatewayHostname: a gateway has a hostname, which proxies
	// resolve with DNS (or istiod drops).
	ProblemGatewayHostname ProblemKind = "gateway-hostname"
	// ProblemGatewayAddressConflict: gateways of several networks share an
	// address.
	ProblemGatewayAddressConflict ProblemKind = "gateway-address-conflict"
	// ProblemDuplicateGateway: Envoy keeps only the first of several
	// entries istiod sends for one gateway (istio#56355).
	ProblemDuplicateGateway ProblemKind = "duplicate-gateway"
	// ProblemNetworkLabel: a pod's network label disagrees with its
	// cluster's.
	ProblemNetworkLabel ProblemKind = "network-label"
)

// Problems of the second hop: a cross-network request reaches the remote
// network's east-west gateway, whose own config (analysis/gatewayhop) must
// carry it on to that network's endpoints.
const (
	// ProblemHopNoListener: no Gateway with an AUTO_PASSTHROUGH server
	// selects a network's gateway pods: every cross-network path into
	// that network is lost.
	ProblemHopNoListener ProblemKind = "second-hop-no-listener"
	// ProblemHopPort: the gateway Service's mTLS port reaches a pod port
	// the gateway does not listen on.
	ProblemHopPort ProblemKind = "second-hop-port"
	// ProblemHopNoSNI: a service (or subset) reached from another network
	// has no SNI filter chain and cluster on its gateway (not visible
	// from the gateway's namespace, or outside the server's hosts).
	ProblemHopNoSNI ProblemKind = "second-hop-no-sni"
	// ProblemHopPods: no ready gateway pod runs a router proxy.
	ProblemHopPods ProblemKind = "second-hop-pods"
	// ProblemHopNetwork: a gateway proxy's NETWORK or
	// REQUESTED_NETWORK_VIEW sends its requests elsewhere (a loop, another
	// network), or its pod lacks the network label.
	ProblemHopNetwork ProblemKind = "second-hop-network"
	// ProblemHopEndpoints: the gateway's SNI-DNAT cluster holds no healthy
	// endpoint of its network.
	ProblemHopEndpoints ProblemKind = "second-hop-endpoints"
	// ProblemHopProxy: the gateway's proxy is connected to no istiod, or
	// not in sync.
	ProblemHopProxy ProblemKind = "second-hop-proxy"
	// ProblemGatewayXDSDiffers: what a control plane sends a gateway pod
	// (listeners, SNI chains, clusters, endpoints) differs from the
	// prediction.
	ProblemGatewayXDSDiffers ProblemKind = "gateway-xds-differs"
	// ProblemIstioGatewayInvalid: an Istio Gateway istiod cannot read (a
	// server's tls.mode it does not know): it ignores all of it.
	ProblemIstioGatewayInvalid ProblemKind = "istio-gateway-invalid"
	// ProblemTrustDomain: one control plane's proxies do not accept the
	// trust domain another's workloads have (mTLS between them fails).
	ProblemTrustDomain ProblemKind = "trust-domain-rejected"
)

// Problems of services and their endpoints.
const (
	// ProblemLeak: a proxy gets another network's pod IP directly.
	ProblemLeak ProblemKind = "leak"
	// ProblemDrop: istiod leaves an endpoint out for a proxy.
	ProblemDrop ProblemKind = "drop"
	// ProblemSkew: the share of traffic that crosses networks is beyond
	// what endpoint counts explain.
	ProblemSkew ProblemKind = "skew"
	// ProblemMissingService: a service exists in some clusters only.
	ProblemMissingService ProblemKind = "missing-service"
	// ProblemInconsistentService: a service's clusters disagree on its
	// ports or shape.
	ProblemInconsistentService ProblemKind = "inconsistent-service"
	// ProblemLocalityFailover: locality failover is silently off.
	ProblemLocalityFailover ProblemKind = "locality-failover"
	// ProblemServiceEntryNoWorkloads: a ServiceEntry selects no workload.
	ProblemServiceEntryNoWorkloads ProblemKind = "serviceentry-no-workloads"
	// ProblemServiceEntryPortName: a ServiceEntry port's name differs from
	// the Kubernetes Service's for the same host and port.
	ProblemServiceEntryPortName ProblemKind = "serviceentry-port-name"
	// ProblemWorkloadEntryUnhealthy: istiod leaves an unhealthy
	// WorkloadEntry out.
	ProblemWorkloadEntryUnhealthy ProblemKind = "workloadentry-unhealthy"
	// ProblemXDSDiffers: what a control plane sends differs from the
	// prediction.
	ProblemXDSDiffers ProblemKind = "xds-differs"
	// ProblemStaleEndpoint: a control plane still sends an endpoint that
	// is gone.
	ProblemStaleEndpoint ProblemKind = "stale-endpoint"
)

// Problems of ambient mode.
const (
	// ProblemAmbientNoGateway: a network has no HBONE gateway.
	ProblemAmbientNoGateway ProblemKind = "ambient-no-gateway"
	// ProblemAmbientSeveralGateways: a network has several gateways; one
	// is used.
	ProblemAmbientSeveralGateways ProblemKind = "ambient-several-gateways"
	// ProblemAmbientGatewayIgnored: a gateway istiod does not use.
	ProblemAmbientGatewayIgnored ProblemKind = "ambient-gateway-ignored"
	// ProblemAmbientScopeMismatch: a service is global in some clusters
	// only.
	ProblemAmbientScopeMismatch ProblemKind = "ambient-scope-mismatch"
	// ProblemAmbientSidecarDrop: ambient pods are left out of other
	// networks' sidecars (information).
	ProblemAmbientSidecarDrop ProblemKind = "ambient-sidecar-drop"
	// ProblemWaypointCrossNetwork: a service's waypoint is in another
	// network.
	ProblemWaypointCrossNetwork ProblemKind = "waypoint-cross-network"
	// ProblemWaypointUnresolved: a service names a waypoint istiod cannot
	// resolve.
	ProblemWaypointUnresolved ProblemKind = "waypoint-unresolved"
	// ProblemWDSDiffers: what a control plane sends ztunnels differs from
	// the prediction.
	ProblemWDSDiffers ProblemKind = "wds-differs"
)

// Problems of the mesh's real proxies (analysis/fleet, read from every
// istiod's /debug/syncz).
const (
	// ProblemProxyDisconnected: a pod with a proxy that no istiod lists.
	ProblemProxyDisconnected ProblemKind = "proxy-disconnected"
	// ProblemProxyStale: a proxy NACKed istiod's last push, or has not
	// acknowledged it for a while.
	ProblemProxyStale ProblemKind = "proxy-stale"
	// ProblemProxyIdentityDrift: a sidecar injected with a network or
	// cluster its pod no longer has.
	ProblemProxyIdentityDrift ProblemKind = "proxy-identity-drift"
	// ProblemVersionSkew: a proxy outside the skew its istiod supports, or
	// primaries on different minor versions.
	ProblemVersionSkew ProblemKind = "version-skew"
)

// Problems of istiod revisions (canary upgrades; model/revisions.go).
const (
	// ProblemNamespaceRevision: a namespace labelled for injection by a
	// revision (or tag) no istiod serves in its cluster.
	ProblemNamespaceRevision ProblemKind = "namespace-revision-missing"
	// ProblemProxyRevision: pods injected by a revision no istiod serves.
	ProblemProxyRevision ProblemKind = "proxy-revision-missing"
	// ProblemProxyRevisionOutdated: pods on another revision than their
	// namespace now asks for (information: they move when restarted).
	ProblemProxyRevisionOutdated ProblemKind = "proxy-revision-outdated"
	// ProblemRevisionConfigDiffers: two revisions of one primary read
	// ConfigMaps that differ in what decides endpoints.
	ProblemRevisionConfigDiffers ProblemKind = "revision-config-differs"
	// ProblemRevisionLabelledConfig: Istio config labelled for another
	// revision than the one meshscope predicts for (information).
	ProblemRevisionLabelledConfig ProblemKind = "revision-labelled-config"
	// ProblemRevisionsSendDifferently: two revisions of one primary really
	// sent the same proxy different endpoints (what it gets depends on
	// which revision its namespace asks for).
	ProblemRevisionsSendDifferently ProblemKind = "revisions-send-differently"
)
