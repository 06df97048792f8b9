package tui

import (
	"slices"
	"testing"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

func TestRevisionsCell(t *testing.T) {
	pod := func(rev string, ready bool) model.IstiodPod {
		return model.IstiodPod{Name: "istiod-" + rev, Revision: rev, Ready: ready}
	}
	for _, tc := range []struct {
		name  string
		pods  []model.IstiodPod
		want  string
		ready bool
	}{
		{"one revision", []model.IstiodPod{pod("default", true), pod("default", true)}, "", true},
		{"unlabelled is the default", []model.IstiodPod{pod("", true), pod("default", true)}, "", true},
		{"a canary", []model.IstiodPod{pod("default", true), pod("1-28", true)}, "revisions 1-28, default (2 pods)", true},
		{"a canary not ready", []model.IstiodPod{pod("default", true), pod("1-28", false)}, "revisions 1-28, default (2 pods), one not ready", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ready := revisionsCell(tc.pods)
			if got != tc.want || ready != tc.ready {
				t.Errorf("%q %v, want %q %v", got, ready, tc.want, tc.ready)
			}
		})
	}
}

// TestSettingsText: an istiod's settings grouped by where they came from,
// the source first; a guess (inferred from the mesh, a value istiod does
// not read) is flagged.
func TestSettingsText(t *testing.T) {
	set := func(ss ...model.Setting) model.IstiodSettings {
		return model.IstiodSettings{ControlPlane: "cluster1", Settings: ss}
	}
	for _, tc := range []struct {
		name    string
		st      model.IstiodSettings
		want    string
		guessed bool
	}{
		{"istiod's defaults", set(), "default: ambient off, multi-network off, gateway DNS on", false},
		{"the ambient lab's pod", set(
			model.Setting{Key: model.SettingAmbient, Value: true, From: model.FromPod, Note: "istiod-local"},
			model.Setting{Key: model.SettingAmbientMultiNetwork, Value: true, From: model.FromPod, Note: "istiod-local"}),
			"pod istiod-local: ambient on, multi-network on · default: gateway DNS on", false},
		{"--istiod-env", set(model.Setting{Key: model.SettingResolveHostnameGateways, Value: false, From: model.FromFlag}),
			"default: ambient off, multi-network off · --istiod-env: gateway DNS off", false},
		{"inferred", set(
			model.Setting{Key: model.SettingAmbient, Value: true, From: model.FromInferred},
			model.Setting{Key: model.SettingAmbientMultiNetwork, Value: true, From: model.FromInferred}),
			"inferred: ambient on, multi-network on · default: gateway DNS on", true},
		{"not a boolean", set(model.Setting{Key: model.SettingAmbient, Value: false, From: model.FromDefault, Note: `(pod istiod-local sets "yes", which istiod does not read as a boolean)`}),
			"default (the pod's value is no boolean): ambient off · default: multi-network off, gateway DNS on", true},
	} {
		got, guessed := settingsText(tc.st)
		if got != tc.want || guessed != tc.guessed {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, guessed, tc.want, tc.guessed)
		}
	}
}

// TestControlPlaneRowsPerRevision: a primary in a canary upgrade is two
// rows, each with its own revision's istiod pods and the clusters both read.
func TestControlPlaneRowsPerRevision(t *testing.T) {
	snap := testSnapshot()
	c := &snap.Clusters[0]
	c.Istiods = []model.IstiodPod{{Name: "istiod-1", ClusterID: c.ID, Ready: true}, {Name: "istiod-canary-1", ClusterID: c.ID, Revision: "canary", Ready: true}}
	c.PredictedRevision = "default"
	snap.RevisionPlanes = []model.RevisionPlane{{Cluster: c.ID, Revision: "canary"}}
	rows := controlPlaneRows(plane.NewSet(snap, nil))
	byID := map[string]cpRow{}
	for _, r := range rows {
		byID[r.id] = r
	}
	canary, def := byID[c.ID+"@canary"], byID[c.ID]
	if len(canary.istiods) != 1 || canary.istiods[0].Name != "istiod-canary-1" || canary.cluster != c.ID {
		t.Errorf("the canary's row: %+v", canary)
	}
	if len(def.istiods) != 1 || def.istiods[0].Name != "istiod-1" {
		t.Errorf("the default revision's row: %+v", def)
	}
	if len(rows) != len(snap.ControlPlanes())+1 || !slices.Equal(canary.reads, def.reads) {
		t.Errorf("rows %+v", rows)
	}
}
