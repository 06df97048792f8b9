package fix

import "github.com/meshscope/meshscope/model"

// entry is what fixes one problem kind: a planner, or why no fix is
// mechanical (a planner's fallback when it finds nothing to change).
type entry struct {
	plan planner
	none string
}

// kinds holds every problem kind (TestEveryKindHasAnEntry): its planner,
// or why meshscope cannot plan a change for it.
var kinds = map[model.ProblemKind]entry{
	// Clusters and their credentials.
	model.ProblemClusterState:          {none: "the cause is outside the mesh's objects (an API server that does not answer, a network, a kubeconfig of meshscope's): the sentence says which"},
	model.ProblemClusterWarning:        {none: "a permission of meshscope's own credentials: nothing in the mesh changes"},
	model.ProblemRemoteSecret:          {plan: planRemoteSecret, none: "the secret's kubeconfig is refused or fails: it must be made again"},
	model.ProblemRemoteSecretDuplicate: {plan: planDuplicateSecret, none: "which of the secrets names the cluster by its real ID is for its owner to say: delete the other (meshscope names both)"},
	model.ProblemRemoteSecretClusterID: {plan: planSecretClusterID, none: "the secret must be made again under the cluster's own ID"},
	model.ProblemRemoteSecretRBAC:      {plan: planSecretRBAC},
	// A credential that expired, is refused by istiod or its API server,
	// or whose CA does not verify the server: the secret made again
	// (istioctl: a reader token, the context's server and CA), whose new
	// credential the proof's what-if tries.
	model.ProblemRemoteSecretExpiry:       {plan: planRemoteSecret, none: "the secret's kubeconfig must be made again"},
	model.ProblemRemoteSecretRefused:      {plan: planRemoteSecret, none: "the secret's kubeconfig must be made again"},
	model.ProblemRemoteSecretTLS:          {plan: planRemoteSecret, none: "the secret's kubeconfig must be made again"},
	model.ProblemRemoteSecretUnauthorized: {plan: planRemoteSecret, none: "the secret's kubeconfig must be made again"},
	model.ProblemRemoteSecretUnreachable:  {none: "where meshscope runs cannot reach the server: nothing in the mesh's objects to change"},
	model.ProblemRemoteSecretServer:       {none: "the address istiod's cluster reaches is the network's to say (istioctl create-remote-secret --server=)"},
	model.ProblemRemoteSecretStale:        {none: "restarting istiod makes it load the secret again, which what-if cannot model"},
	model.ProblemIstiodSecretBug:          {none: "a restart and an upgrade of istiod, not an object change"},

	// Control planes.
	model.ProblemControlPlaneMissingCluster: {plan: planMissingCluster, none: "no remote secret can be built for the cluster"},
	model.ProblemIstiodDisagrees:            {none: "istiod's own view differs from the clusters' objects: the cause is in istiod's watch or its network, not in an object — restarting istiod resyncs it, which what-if cannot model"},
	model.ProblemIstiodUnreachable:          {none: "meshscope could not reach istiod: nothing in the mesh is wrong that an object would fix"},
	model.ProblemRootCA:                     {none: "a certificate authority's material: meshscope never writes keys or certificates"},
	model.ProblemRootCAExpiry:               {none: "rotating a root CA is a certificate authority's work (plug-in CA secret cacerts): meshscope never writes keys or certificates"},
	model.ProblemRootCAMismatch:             {none: "the clusters need certificates from one shared root (plug-in CA secret cacerts in every cluster): meshscope never writes keys or certificates"},
	model.ProblemConfigSkew:                 {none: "which primary's config is meant is for its owner to say: apply the same objects in both config clusters"},
	model.ProblemMeshConfig:                 {none: "the mesh config's text is the author's: meshscope cannot tell what it was meant to say"},

	// East-west gateways and networks.
	model.ProblemGatewayNoAddress:       {none: "an address is the infrastructure's to give (a load balancer, externalIPs)"},
	model.ProblemGatewayNotReady:        {none: "the gateway's pods are not ready: their cause is in the pods (kubectl describe), not in an object meshscope reads"},
	model.ProblemGatewayLBPending:       {none: "the cloud's load balancer controller gives the address: nothing to change in the mesh"},
	model.ProblemGatewayPort:            {plan: planGatewayPort},
	model.ProblemGatewayHostname:        {none: "DNS answers are the resolver's: nothing in the mesh's objects decides them"},
	model.ProblemGatewayAddressConflict: {none: "an address is the infrastructure's to give: give each network's gateway its own"},
	model.ProblemDuplicateGateway:       {plan: planDuplicateGateway, none: "the pods behind the gateway are not known"},
	model.ProblemNetworkLabel:           {plan: planNetworkLabel},

	// The second hop: the east-west gateway as istiod configures it.
	model.ProblemHopNoListener:       {plan: planHopNoListener, none: "no Gateway can be planned for the gateway pod"},
	model.ProblemHopPort:             {plan: planHopPort, none: "the gateway Service's port cannot be pointed at one listener"},
	model.ProblemHopNoSNI:            {plan: planHopNoSNI, none: "the gateway misses the service for a reason no object change decides (istiod does not know it, a MESH_EXTERNAL ServiceEntry, no such port, a mesh-wide exportTo default): the sentence says which"},
	model.ProblemHopNetwork:          {plan: planHopNetwork, none: "the gateway proxy's network settings come from its install (the gateway chart's networkGateway value): install it again for its network"},
	model.ProblemHopPods:             {none: "the gateway's pods are missing, not ready or run no router proxy: a deployment (istioctl multicluster expose, the gateway chart) meshscope cannot make up"},
	model.ProblemHopEndpoints:        {none: "the service has no healthy endpoint in the gateway's network, or its endpoints are dropped for a cause doctor reports in its own row: fix that row"},
	model.ProblemHopProxy:            {none: "a gateway proxy that reaches no istiod or does not acknowledge a push: its log says why"},
	model.ProblemGatewayXDSDiffers:   {none: "istiod sends the gateway other than predicted: a sync in progress or a rule meshscope does not model, not an object to change"},
	model.ProblemIstioGatewayInvalid: {none: "a server's tls.mode istiod does not know: which mode was meant is the Gateway's author's to say"},
	model.ProblemTrustDomain:         {none: "trust domains and their aliases are set at install (meshConfig.trustDomain, trustDomainAliases) and a workload's identity by its CA: a change of install, not of an object"},

	// Services and their endpoints.
	model.ProblemLeak:                    {plan: planLeak},
	model.ProblemDrop:                    {plan: planDrop},
	model.ProblemSkew:                    {none: "information about how traffic is spread (unhealthy endpoints counted in gateway weights, uneven weights): nothing is broken that an object would fix"},
	model.ProblemMissingService:          {plan: planMissingService},
	model.ProblemInconsistentService:     {none: "which cluster's copy is meant is for its owner to say: make the copies the same"},
	model.ProblemLocalityFailover:        {plan: planLocalityFailover, none: "the failover comes from the mesh config: each service needs a DestinationRule with outlierDetection, whose thresholds are its owner's"},
	model.ProblemServiceEntryNoWorkloads: {none: "which workloads the ServiceEntry was meant to select is its author's to say"},
	model.ProblemServiceEntryPortName:    {plan: planServiceEntryPortName},
	model.ProblemWorkloadEntryUnhealthy:  {none: "health is the workload's own (its health checks): nothing to change in the mesh"},
	model.ProblemXDSDiffers:              {none: "istiod sends other than predicted: a sync in progress or a rule meshscope does not model, not an object to change"},
	model.ProblemStaleEndpoint:           {plan: planStaleEndpoint},

	// Ambient mode.
	model.ProblemAmbientNoGateway:       {none: "the network needs an east-west Gateway deployed (istioctl multicluster expose): a deployment meshscope cannot make up"},
	model.ProblemAmbientSeveralGateways: {none: "which gateway is meant is for its owner to say: delete the others"},
	model.ProblemAmbientGatewayIgnored:  {none: "the Gateway needs a listener or an address its gateway controller gives: not a change meshscope can make up"},
	model.ProblemAmbientScopeMismatch:   {plan: planAmbientScope, none: "no GLOBAL entry of the mesh config's serviceScopeConfigs selects labels meshscope can write (In, Exists, matchLabels): label the Service alike in every cluster"},
	model.ProblemAmbientSidecarDrop:     {none: "information: ztunnels reach these pods over HBONE; nothing to fix"},
	model.ProblemWaypointCrossNetwork:   {none: "a waypoint is a deployment whose policies decide which side is meant: deploy it in istiod's cluster too, or remove the label"},
	model.ProblemWaypointUnresolved:     {none: "the waypoint must be deployed (or the label fixed): which is meant is its owner's to say"},
	model.ProblemWDSDiffers:             {none: "istiod sends other than predicted: a sync in progress or a rule meshscope does not model, not an object to change"},

	// The mesh's proxies.
	model.ProblemProxyDisconnected:        {none: "a proxy that reaches no istiod: its own log says why (the network, its credentials)"},
	model.ProblemProxyStale:               {none: "a proxy that does not acknowledge a push: its log says why (overload, a config it rejects)"},
	model.ProblemProxyIdentityDrift:       {plan: planRestart},
	model.ProblemVersionSkew:              {none: "an upgrade (of the proxies or of istiod) is a rollout of its own, not an object change"},
	model.ProblemNamespaceRevision:        {plan: planNamespaceRevision},
	model.ProblemProxyRevision:            {plan: planRestart},
	model.ProblemProxyRevisionOutdated:    {plan: planRestart},
	model.ProblemRevisionConfigDiffers:    {none: "which revision's ConfigMap is meant is for its owner to say: make them agree before moving namespaces"},
	model.ProblemRevisionLabelledConfig:   {none: "information: that revision's istiod reads its own config"},
	model.ProblemRevisionsSendDifferently: {none: "a consequence of the revisions' configs differing (revision-config-differs): fix that, or move namespaces knowingly"},
}
