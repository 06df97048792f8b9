package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// Need is an input a check needs beyond the snapshot; a check whose needs
// are not met does not run, and the diagnosis says so (Diagnosis.NotRun).
type Need string

// The needs of doctor's checks.
const (
	// NeedIstiodView: istiod's own debug views (/debug/clusterz, networkz).
	NeedIstiodView Need = "istiod's debug views"
	// NeedSentEDS: what the control planes really sent an impersonated
	// sidecar.
	NeedSentEDS Need = "what istiod sent a sidecar"
	// NeedAmbient: a cluster runs ambient mode.
	NeedAmbient Need = "ambient mode"
	// NeedSentWDS: what the control planes really sent an impersonated
	// ztunnel.
	NeedSentWDS Need = "what istiod sent a ztunnel"
	// NeedFleet: the mesh's proxies joined with every istiod's syncz.
	NeedFleet Need = "the proxies' sync state"
	// NeedRevisions: a primary runs several istiod revisions.
	NeedRevisions Need = "several revisions of one istiod"
	// NeedSentGateway: what the control planes really sent an
	// impersonated east-west gateway pod.
	NeedSentGateway Need = "what istiod sent a gateway"
)

// ofTheMesh: the need is a feature of the mesh, not an input a run reads.
func (n Need) ofTheMesh() bool { return n == NeedAmbient || n == NeedRevisions }

// missing says why in lacks need ("" when it has it).
func (n Need) missing(snap *model.Snapshot, in *Inputs) string {
	switch n {
	case NeedIstiodView:
		if len(in.Istiod) == 0 {
			return "no istiod's debug views were read (--istiod-debug-address, or a port-forward to each primary's istiod)"
		}
	case NeedSentEDS:
		if len(in.Sent) == 0 {
			return "no sidecar streams were asked (--offline, or no control plane reached)"
		}
	case NeedAmbient:
		if !snap.AmbientInUse() {
			return "no cluster runs ambient mode"
		}
	case NeedSentWDS:
		if len(in.WDS) == 0 {
			return "no ztunnel stream was asked (--offline, or no istiod runs ambient multi-network mode)"
		}
	case NeedSentGateway:
		if len(in.Gateways) == 0 {
			return "no gateway pod was impersonated (--offline, no control plane reached, or no gateway pod runs a router proxy)"
		}
	case NeedFleet:
		if in.Fleet == nil {
			return "no istiod's /debug/syncz was read"
		}
	case NeedRevisions:
		for _, cp := range snap.ControlPlanes() {
			if len(snap.RevisionControlPlanes(cp)) > 0 {
				return ""
			}
		}
		return "no primary runs several revisions"
	}
	return ""
}

// Check is one of doctor's checks as a value: its name (what --skip
// takes), what it looks at, the problem kinds it can raise, what it needs
// beyond the snapshot, and the function that runs it.
type Check struct {
	Name  string
	About string
	Kinds []model.ProblemKind
	Needs []Need
	run   func(snap *model.Snapshot, in *Inputs) []model.Problem
}

// Checks are doctor's checks, in the order they run.
var Checks = []Check{
	{Name: "clusters", About: "every cluster is watched and synced",
		Kinds: kinds(model.ProblemClusterState, model.ProblemClusterWarning, model.ProblemRemoteSecret),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return clusterProblems(s) }},
	{Name: "remote-secrets", About: "remote secrets name each cluster once, by its istiod's ID",
		Kinds: kinds(model.ProblemRemoteSecretDuplicate, model.ProblemRemoteSecretClusterID),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return secretProblems(s) }},
	{Name: "remote-secret-credentials", About: "each remote secret's credential, tried read-only from here: istiod loads it, it does not expire within 7 days, its CA verifies its server, the server accepts it, its user holds istio's reader role",
		Kinds: kinds(model.ProblemRemoteSecretRefused, model.ProblemRemoteSecretExpiry, model.ProblemRemoteSecretTLS,
			model.ProblemRemoteSecretUnauthorized, model.ProblemRemoteSecretUnreachable, model.ProblemRemoteSecretRBAC),
		run: func(s *model.Snapshot, in *Inputs) []model.Problem {
			return append(credentialProblems(s, in.Now), secretRBACProblems(s)...)
		}},
	{Name: "remote-secret-servers", About: "each remote secret names a server istiod's cluster can reach (not loopback, localhost, the in-cluster name), unless istiod shows it synced",
		Kinds: kinds(model.ProblemRemoteSecretServer), Needs: []Need{NeedIstiodView},
		run: func(s *model.Snapshot, in *Inputs) []model.Problem { return secretServerProblems(s, in.Istiod, in.Now) }},
	{Name: "remote-secret-istiod", About: "istiod runs the current version of each remote secret, and its version has no known remote-secret bug the secrets run into",
		Kinds: kinds(model.ProblemRemoteSecretStale, model.ProblemIstiodSecretBug),
		run: func(s *model.Snapshot, in *Inputs) []model.Problem {
			return append(staleSecretProblems(s, in.Istiod, in.Now), secretBugProblems(s)...)
		}},
	{Name: "control-planes", About: "every primary's istiod reads every cluster of the mesh",
		Kinds: kinds(model.ProblemControlPlaneMissingCluster),
		run:   func(_ *model.Snapshot, in *Inputs) []model.Problem { return controlPlaneProblems(in.Planes) }},
	{Name: "root-cas", About: "the clusters' root certificates share a root and do not expire soon",
		Kinds: kinds(model.ProblemRootCA, model.ProblemRootCAExpiry, model.ProblemRootCAMismatch),
		run:   func(s *model.Snapshot, in *Inputs) []model.Problem { return rootCAProblems(s, in.Now) }},
	{Name: "east-west-gateways", About: "each network's gateway has an address, the mTLS port, a ready pod, a name that resolves",
		Kinds: kinds(model.ProblemGatewayNoAddress, model.ProblemGatewayNotReady, model.ProblemGatewayPort, model.ProblemGatewayLBPending,
			model.ProblemGatewayAddressConflict, model.ProblemGatewayHostname),
		run: func(s *model.Snapshot, in *Inputs) []model.Problem {
			return eastWestProblems(s, in.Istiod, in.Now, in.LBPendingAfter)
		}},
	{Name: "second-hop", About: "each network's east-west gateway carries what other networks send it: a listener on the port traffic reaches, an SNI chain and cluster per service port and subset, healthy endpoints of its network",
		Kinds: kinds(model.ProblemHopNoListener, model.ProblemHopPort, model.ProblemHopNoSNI, model.ProblemHopPods, model.ProblemHopNetwork,
			model.ProblemHopEndpoints, model.ProblemHopProxy, model.ProblemIstioGatewayInvalid),
		run: secondHopProblems},
	{Name: "trust-domains", About: "every control plane's proxies accept the trust domain of the others' workloads",
		Kinds: kinds(model.ProblemTrustDomain),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return trustDomainProblems(s) }},
	{Name: "network-labels", About: "pods carry the network of their cluster",
		Kinds: kinds(model.ProblemNetworkLabel),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return labelProblems(s) }},
	{Name: "revisions", About: "namespaces and proxies are bound to revisions that run; revisions of one primary read the same config",
		Kinds: kinds(model.ProblemNamespaceRevision, model.ProblemProxyRevision, model.ProblemProxyRevisionOutdated,
			model.ProblemRevisionConfigDiffers, model.ProblemRevisionLabelledConfig),
		run: func(s *model.Snapshot, _ *Inputs) []model.Problem { return revisionProblems(s) }},
	{Name: "missing-services", About: "a service exists in every cluster whose sidecars call it",
		Kinds: kinds(model.ProblemMissingService),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return missingServiceProblems(s) }},
	{Name: "inconsistent-services", About: "a service has the same ports and shape in every cluster",
		Kinds: kinds(model.ProblemInconsistentService),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return inconsistentServiceProblems(s) }},
	{Name: "localities", About: "locality failover has the outlier detection it needs",
		Kinds: kinds(model.ProblemLocalityFailover),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return localityProblems(s) }},
	{Name: "config-skew", About: "primaries hold the same Istio config for a service",
		Kinds: kinds(model.ProblemConfigSkew),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return configSkewProblems(s) }},
	{Name: "istio-config", About: "mesh config parses; ServiceEntries and WorkloadEntries give istiod endpoints",
		Kinds: kinds(model.ProblemMeshConfig, model.ProblemServiceEntryNoWorkloads, model.ProblemServiceEntryPortName, model.ProblemWorkloadEntryUnhealthy),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return istioConfigProblems(s) }},
	{Name: "predicted-endpoints", About: "every service from every network, as each control plane is predicted to send it: leaks, drops, skew",
		Kinds: kinds(model.ProblemLeak, model.ProblemDrop, model.ProblemSkew, model.ProblemDuplicateGateway, model.ProblemAmbientSidecarDrop),
		run: func(s *model.Snapshot, in *Inputs) []model.Problem {
			return controlPlaneServiceProblems(in.Planes, in.SkewThreshold)
		}},
	{Name: "istiod-view", About: "istiod's own view (clusterz, networkz) agrees with what meshscope reads",
		Kinds: kinds(model.ProblemIstiodDisagrees), Needs: []Need{NeedIstiodView},
		run: func(s *model.Snapshot, in *Inputs) []model.Problem {
			var ps []model.Problem
			for _, v := range in.Istiod {
				ps = append(ps, IstiodDisagreements(s, v)...)
			}
			return ps
		}},
	{Name: "sent-eds", About: "what each control plane really sends a sidecar equals the prediction; no stale endpoints",
		Kinds: kinds(model.ProblemXDSDiffers, model.ProblemStaleEndpoint, model.ProblemIstiodUnreachable), Needs: []Need{NeedSentEDS},
		run: sentProblems},
	{Name: "sent-gateway", About: "what each control plane really sends an east-west gateway pod (listeners, SNI chains, clusters, endpoints) equals the prediction",
		Kinds: kinds(model.ProblemGatewayXDSDiffers, model.ProblemIstiodUnreachable), Needs: []Need{NeedSentGateway},
		run: sentGatewayProblems},
	{Name: "revisions-sent", About: "the revisions of one primary send a proxy the same endpoints",
		Kinds: kinds(model.ProblemRevisionsSendDifferently), Needs: []Need{NeedRevisions, NeedSentEDS},
		run: func(s *model.Snapshot, in *Inputs) []model.Problem { return revisionsSentProblems(s, in.Sent) }},
	{Name: "ambient", About: "ambient: each network has an HBONE gateway istiod uses; global services and waypoints as meant",
		Kinds: kinds(model.ProblemAmbientNoGateway, model.ProblemAmbientSeveralGateways, model.ProblemAmbientGatewayIgnored,
			model.ProblemAmbientScopeMismatch, model.ProblemWaypointCrossNetwork, model.ProblemWaypointUnresolved),
		Needs: []Need{NeedAmbient},
		run:   func(_ *model.Snapshot, in *Inputs) []model.Problem { return ambientProblems(in.Planes) }},
	{Name: "sent-wds", About: "what each control plane really sends a ztunnel equals the prediction",
		Kinds: kinds(model.ProblemWDSDiffers, model.ProblemIstiodUnreachable), Needs: []Need{NeedAmbient, NeedSentWDS},
		run: wdsProblems},
	{Name: "proxies", About: "every proxy is connected, in sync, injected with its pod's identity, within istiod's version skew",
		Kinds: kinds(model.ProblemProxyDisconnected, model.ProblemProxyStale, model.ProblemProxyIdentityDrift, model.ProblemVersionSkew),
		Needs: []Need{NeedFleet},
		run:   func(_ *model.Snapshot, in *Inputs) []model.Problem { return fleetProblems(in.Fleet, in.StaleAfter) }},
	{Name: "istiod-versions", About: "primaries run the same minor version",
		Kinds: kinds(model.ProblemVersionSkew),
		run:   func(s *model.Snapshot, _ *Inputs) []model.Problem { return primarySkew(fleet.IstiodVersions(s)) }},
}

func kinds(k ...model.ProblemKind) []model.ProblemKind { return k }

// NotRun is a check that did not run, and why. NotApplicable marks a check
// the mesh has nothing for (no ambient mode, one revision per primary), as
// against one that lacked an input or was skipped.
type NotRun struct {
	Check         string `json:"check"`
	Why           string `json:"why"`
	NotApplicable bool   `json:"notApplicable,omitempty"`
}

// Diagnosis is what a run of the checks found: the problems (grouped,
// errors first) and the checks that did not run.
type Diagnosis struct {
	Problems []model.Problem
	NotRun   []NotRun
}

// CheckNames are the names of the checks, for --skip's help and errors.
func CheckNames() []string {
	names := make([]string, len(Checks))
	for i, c := range Checks {
		names[i] = c.Name
	}
	return names
}

// ValidateSkip returns an error naming the checks of skip that do not
// exist.
func ValidateSkip(skip []string) error {
	var unknown []string
	for _, s := range skip {
		if !slices.Contains(CheckNames(), s) {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("no check named %s; the checks are %s (meshscope doctor --list-checks)",
			strings.Join(unknown, ", "), strings.Join(CheckNames(), ", "))
	}
	return nil
}

// Run runs every check whose needs in meets and that in.Skip does not
// name; see Diagnose.
func Run(snap *model.Snapshot, in Inputs) Diagnosis {
	if snap == nil {
		return Diagnosis{}
	}
	in.defaults()
	if in.Planes == nil || in.Planes.Snapshot() != snap {
		in.Planes = plane.NewSet(snap, in.Istiod)
	}
	var d Diagnosis
	var ps []model.Problem
	for _, c := range Checks {
		if slices.Contains(in.Skip, c.Name) {
			d.NotRun = append(d.NotRun, NotRun{Check: c.Name, Why: "skipped (--skip)"})
			continue
		}
		if n, why := c.unmet(snap, &in); why != "" {
			d.NotRun = append(d.NotRun, NotRun{Check: c.Name, Why: why, NotApplicable: n.ofTheMesh()})
			continue
		}
		for _, p := range c.run(snap, &in) {
			p.Check = c.Name
			ps = append(ps, p)
		}
	}
	d.Problems = group(dedupe(ps))
	SortProblems(d.Problems)
	return d
}

// unmet says which of c's needs in does not meet and why ("" when it
// meets all).
func (c Check) unmet(snap *model.Snapshot, in *Inputs) (Need, string) {
	for _, n := range c.Needs {
		if why := n.missing(snap, in); why != "" {
			return n, why
		}
	}
	return "", ""
}
