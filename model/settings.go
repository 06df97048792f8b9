package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// istiod's own settings. Some of what istiod sends depends on its
// environment, not on any object of the mesh: whether it runs ambient
// mode at all (PILOT_ENABLE_AMBIENT), ambient multi-network mode
// (AMBIENT_ENABLE_MULTI_NETWORK, which istiod ignores without the first,
// features.registerAmbient), whether it resolves gateway DNS names
// (RESOLVE_HOSTNAME_GATEWAYS), whether a gateway takes only the Gateways
// of its own namespace (PILOT_SCOPE_GATEWAY_TO_NAMESPACE). meshscope reads them from each istiod pod's
// discovery container (each revision has its own), lets the user state
// them (--istiod-env), and says where every value came from.

// The settings meshscope's predictions read.
const (
	SettingAmbient                 = "PILOT_ENABLE_AMBIENT"
	SettingAmbientMultiNetwork     = "AMBIENT_ENABLE_MULTI_NETWORK"
	SettingResolveHostnameGateways = "RESOLVE_HOSTNAME_GATEWAYS"
	// SettingScopeGatewayToNamespace: a gateway proxy takes only the
	// Gateways of its own namespace (PushContext.mergeGateways).
	SettingScopeGatewayToNamespace = "PILOT_SCOPE_GATEWAY_TO_NAMESPACE"
)

// EnvInsecureKubeconfigOptions lists the kubeconfig options istiod allows
// in remote secrets (pilot/pkg/features InsecureKubeConfigOptions: exec,
// tokenFile, clientCertificate, clientKey, an auth provider's name),
// comma-separated; a string, not one of the boolean settings.
const EnvInsecureKubeconfigOptions = "PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS"

// settingDefaults are istiod's defaults (pilot/pkg/features).
var settingDefaults = map[string]bool{
	SettingAmbient:                 false,
	SettingAmbientMultiNetwork:     false,
	SettingResolveHostnameGateways: true,
	SettingScopeGatewayToNamespace: false,
}

// SettingKeys are the settings meshscope reads, in a stable order.
var SettingKeys = []string{SettingAmbient, SettingAmbientMultiNetwork, SettingResolveHostnameGateways, SettingScopeGatewayToNamespace}

// SettingFrom says where a setting's value came from.
type SettingFrom string

const (
	// FromPod: the env of the istiod pod's discovery container.
	FromPod SettingFrom = "istiod pod"
	// FromFlag: --istiod-env.
	FromFlag SettingFrom = "--istiod-env"
	// FromDefault: istiod's default (its pod sets nothing).
	FromDefault SettingFrom = "istiod's default"
	// FromInferred: no istiod pod could be read; the value is what the
	// mesh's objects imply (ambient mode in use, ambient east-west gateways).
	FromInferred SettingFrom = "inferred from the mesh"
)

// Setting is one setting of one istiod.
type Setting struct {
	Key   string      `json:"key"`
	Value bool        `json:"value"`
	From  SettingFrom `json:"from"`
	// Note says more: the pod, an invalid value istiod ignores.
	Note string `json:"note,omitempty"`
}

// IstiodSettings are one control plane's settings.
type IstiodSettings struct {
	ControlPlane string    `json:"controlPlane"`
	Settings     []Setting `json:"settings"`
}

// Get returns a setting (istiod's default when absent).
func (s IstiodSettings) Get(key string) Setting {
	for _, v := range s.Settings {
		if v.Key == key {
			return v
		}
	}
	return Setting{Key: key, Value: settingDefaults[key], From: FromDefault}
}

// ambient says whether the istiod runs ambient mode.
func (s IstiodSettings) ambient() bool { return s.Get(SettingAmbient).Value }

// AmbientMultiNetwork says whether the istiod runs ambient multi-network
// mode: AMBIENT_ENABLE_MULTI_NETWORK, which counts only with ambient on.
func (s IstiodSettings) AmbientMultiNetwork() bool {
	return s.ambient() && s.Get(SettingAmbientMultiNetwork).Value
}

// String is "PILOT_ENABLE_AMBIENT=false (istiod's default), …".
func (s IstiodSettings) String() string {
	var parts []string
	for _, k := range SettingKeys {
		v := s.Get(k)
		from := string(v.From)
		if v.Note != "" {
			from += " " + v.Note
		}
		parts = append(parts, fmt.Sprintf("%s=%t (%s)", k, v.Value, from))
	}
	return strings.Join(parts, ", ")
}

// IstiodEnv is a setting the user states for one control plane (Cluster)
// or every one (Cluster ""): --istiod-env [CLUSTER=]KEY=VALUE.
type IstiodEnv struct {
	Cluster string `json:"cluster,omitempty"`
	Key     string `json:"key"`
	Value   string `json:"value"`
}

// ParseIstiodEnv reads [CLUSTER=]KEY=VALUE, KEY one of SettingKeys and
// VALUE a boolean as istiod parses it.
func ParseIstiodEnv(s string) (IstiodEnv, error) {
	parts := strings.Split(s, "=")
	var e IstiodEnv
	switch len(parts) {
	case 2:
		e.Key, e.Value = parts[0], parts[1]
	case 3:
		e.Cluster, e.Key, e.Value = parts[0], parts[1], parts[2]
	default:
		return e, fmt.Errorf("--istiod-env %q: want [CLUSTER=]KEY=VALUE", s)
	}
	if !slices.Contains(SettingKeys, e.Key) {
		return e, fmt.Errorf("--istiod-env %q: meshscope models %s", s, strings.Join(SettingKeys, ", "))
	}
	if _, err := strconv.ParseBool(e.Value); err != nil {
		return e, fmt.Errorf("--istiod-env %q: %s is a boolean (true or false)", s, e.Key)
	}
	return e, nil
}

// settingsInput is what the settings of one control plane come from.
type settingsInput struct {
	cluster string
	pods    []IstiodPod
	env     []IstiodEnv
	// ambientInUse and eastWest are what the mesh implies when no pod
	// can be read: ambient mode in use, ambient east-west Gateways.
	ambientInUse, eastWest bool
}

// resolveSettings applies, per setting: --istiod-env for this cluster,
// then for every cluster; else the env of its istiod pod (a ready one
// first); else, with a pod read, istiod's default; with none, what the
// mesh implies for the ambient settings (an ambient mesh needs an istiod
// with ambient on) and the default for the rest.
func resolveSettings(in settingsInput) IstiodSettings {
	out := IstiodSettings{ControlPlane: in.cluster}
	var pod *IstiodPod
	for i := range in.pods {
		if pod == nil || in.pods[i].Ready && !pod.Ready {
			pod = &in.pods[i]
		}
	}
	for _, k := range SettingKeys {
		s := Setting{Key: k, Value: settingDefaults[k], From: FromDefault}
		switch raw, flag := flagValue(in.env, in.cluster, k); {
		case flag:
			s.Value, _ = strconv.ParseBool(raw)
			s.From = FromFlag
		case pod != nil:
			if raw, ok := pod.Env[k]; ok {
				if v, err := strconv.ParseBool(raw); err == nil {
					s.Value, s.From, s.Note = v, FromPod, pod.Name
				} else {
					s.Note = fmt.Sprintf("(pod %s sets %q, which istiod does not read as a boolean)", pod.Name, raw)
				}
			}
		case k == SettingAmbient && in.ambientInUse, k == SettingAmbientMultiNetwork && in.ambientInUse && in.eastWest:
			s.Value, s.From = true, FromInferred
		}
		out.Settings = append(out.Settings, s)
	}
	return out
}

// flagValue is --istiod-env's value of key for control plane cp: given
// for cp itself (cluster1@canary), else for its cluster (every revision of
// it), else for every control plane.
func flagValue(env []IstiodEnv, cp, key string) (string, bool) {
	cluster := ControlPlaneCluster(cp)
	var all, ofCluster, own string
	var hasAll, hasCluster, hasOwn bool
	for _, e := range env {
		if e.Key != key {
			continue
		}
		switch e.Cluster {
		case cp:
			own, hasOwn = e.Value, true
		case cluster:
			ofCluster, hasCluster = e.Value, true
		case "":
			all, hasAll = e.Value, true
		}
	}
	switch {
	case hasOwn:
		return own, true
	case hasCluster:
		return ofCluster, true
	}
	return all, hasAll
}

// SettingsFor returns a control plane's settings: as assembled, else (a
// snapshot built by hand, a cluster that is no control plane) resolved
// from its cluster's istiod pods as assemble would.
func (s *Snapshot) SettingsFor(controlPlane string) IstiodSettings {
	if s == nil {
		return resolveSettings(settingsInput{cluster: controlPlane})
	}
	for _, st := range s.Settings {
		if st.ControlPlane == controlPlane {
			return st
		}
	}
	in := s.settingsInput(controlPlane, nil)
	return resolveSettings(in)
}

// settingsInput gathers what the settings of control plane cp come from.
func (s *Snapshot) settingsInput(cp string, env []IstiodEnv) settingsInput {
	in := settingsInput{cluster: cp, env: env, ambientInUse: s.AmbientInUse()}
	for i := range s.Ambient {
		in.eastWest = in.eastWest || s.Ambient[i].hasAmbientGateway()
	}
	// A control plane's pods are those of its revision: cluster1@canary's
	// the canary's, cluster1's the predicted revision's (all of them when
	// none of its pods carries it: a pod read without its labels).
	if c := s.ClusterByID(ControlPlaneCluster(cp)); c != nil {
		in.pods = c.IstiodsOfRevision(s.ControlPlaneRevision(cp))
		if in.pods == nil && s.RevisionPlane(cp) == nil {
			in.pods = c.Istiods
		}
	}
	return in
}

// AmbientInUse reports whether any cluster runs ambient mode: a pod
// istio-cni redirects, a namespace in ambient data-plane mode, or a Gateway
// of an ambient class.
func (s *Snapshot) AmbientInUse() bool {
	for _, a := range s.Ambient {
		for _, p := range a.Pods {
			if p.Redirected {
				return true
			}
		}
		for _, l := range a.Namespaces {
			if l[LabelDataplaneMode] == "ambient" {
				return true
			}
		}
		if a.hasAmbientGateway() {
			return true
		}
	}
	return false
}

func (a *AmbientCluster) hasAmbientGateway() bool {
	for _, g := range a.Gateways {
		if g.Class == ClassEastWest || g.Class == ClassRemote {
			return true
		}
	}
	return false
}

// ResolveSettings resolves the settings of every control plane of s, with
// the user's env (the build sets Snapshot.Settings from it).
func (s *Snapshot) ResolveSettings(env []IstiodEnv) []IstiodSettings {
	var out []IstiodSettings
	for _, cp := range s.AllControlPlanes() {
		out = append(out, resolveSettings(s.settingsInput(cp, env)))
	}
	return out
}
