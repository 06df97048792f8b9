package main

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestExplainFromRevision: --from VIEWPOINT@cluster1@REV names another
// revision of cluster1 as the control plane; a revision that runs nowhere
// there is an error naming those that do.
func TestExplainFromRevision(t *testing.T) {
	snap := meshtest.Lab()
	c := &snap.Clusters[0]
	c.Istiods = []model.IstiodPod{{Name: "istiod-1", Ready: true}, {Name: "istiod-canary-1", Revision: "canary", Ready: true}}
	c.PredictedRevision = "default"
	snap.RevisionPlanes = []model.RevisionPlane{{Cluster: c.ID, Revision: "canary"}}
	for _, tc := range []struct{ from, cp, err string }{
		{from: "cluster1/network1@cluster1@canary", cp: "cluster1@canary"},
		{from: "cluster1/network1@cluster1@default", cp: "cluster1@default"},
		{from: "cluster1/network1@cluster1", cp: "cluster1"},
		{from: "cluster1/network1@cluster1@1-27", err: "--from cluster1/network1@cluster1@1-27: no istiod of revision 1-27 runs in cluster1 (revisions there: canary, default)"},
	} {
		vps, err := explainViewpoints(snap, []string{tc.from}, false)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.from, err, tc.err)
			}
		case err != nil || len(vps) != 1 || vps[0].ControlPlane != tc.cp:
			t.Errorf("%s: %+v, %v; want control plane %s", tc.from, vps, err, tc.cp)
		}
	}
}
