package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/model"
)

// The clusters view's control-plane facts: the selected cluster's detail
// (its ID's source, warnings, root CA) and the control planes pane (each
// primary's istiod, the clusters it reads, its root CA).

// rootW is the width of a ROOT CA cell: a mismatch mark, a short
// fingerprint and the expiry date.
const rootW = 21

// rootCell is a cluster's root CA in a table cell: "✗ 89753936 2036-01-01"
// (✗: its bundle shares no root with another cluster's), "-" when it
// publishes none.
func rootCell(vc viewContext, id string) (string, lipgloss.Style) {
	ri, ok := vc.ix.roots[id]
	switch {
	case !ok:
		return "-", vc.st.Muted
	case len(ri.certs) == 0:
		return "unreadable", vc.st.Warn
	}
	c := ri.certs[0]
	t := fmt.Sprintf("%.8s %s", c.Fingerprint, c.NotAfter.Format("2006-01-02"))
	if len(ri.mismatch) > 0 {
		return "✗ " + t, vc.st.Error
	}
	return "  " + t, vc.st.Text
}

// idFromText says where a cluster's ID comes from.
func idFromText(c model.Cluster) string {
	switch c.IDFrom {
	case model.IDFromFlag:
		return "ID from --cluster-id"
	case model.IDFromIstiod:
		return "ID from its istiod's CLUSTER_ID"
	case model.IDFromRemoteSecret:
		return "ID from a remote secret's key"
	case model.IDFromInjector:
		return "ID from the injector's clusterName"
	case model.IDFromContext:
		return "ID is the context name (nothing else names it)"
	}
	return ""
}

// detail is clusterDetail lines about the selected cluster: what does not
// fit in the table (the full reason, source, server, where its ID comes
// from), its warnings (ID disagreements among them), and its root CA.
func (v *clustersView) detail(vc viewContext, w int) []string {
	id, ok := v.cl.selected()
	if !ok {
		return []string{vc.st.Muted.Render(fit("  no clusters yet", w)), "", "", ""}
	}
	c := vc.ix.snap.Clusters[id]
	// The reason first: on a narrow screen what is wrong must not be cut.
	parts := []string{c.ID}
	if c.Reason != "" {
		parts = append(parts, c.Reason)
	}
	parts = append(parts, sourceText(c.Source), orDash(c.Server))
	if t := idFromText(c); t != "" {
		parts = append(parts, t)
	}
	st := vc.st.Muted
	if c.State == model.StateError {
		st = vc.st.Error
	}
	out := []string{st.Render(fit("  "+strings.Join(parts, " · "), w))}

	var warn []string
	if op := istiodOpinion(vc.feed, c); op != "" {
		warn = append(warn, op+": its endpoints from "+c.ID+" may be stale")
	}
	warn = append(warn, c.Warnings...)
	if c.WatchErrors > 0 || c.Reconnects > 0 {
		warn = append(warn, fmt.Sprintf("watch errors %d, reconnects %d", c.WatchErrors, c.Reconnects))
	}
	if len(warn) > 0 {
		out = append(out, vc.st.Warn.Render(fit("  "+strings.Join(warn, " · "), w)))
	} else {
		out = append(out, vc.st.Muted.Render(fit("  no warnings", w)))
	}
	out = append(out, secretDetail(vc, c.ID, w))

	ri, ok := vc.ix.roots[c.ID]
	switch {
	case !ok:
		out = append(out, vc.st.Muted.Render(fit("  root CA: none published (ConfigMap istio-ca-root-cert)", w)))
	case len(ri.certs) == 0:
		out = append(out, vc.st.Warn.Render(fit("  root CA: unreadable: "+ri.err, w)))
	default:
		rc := ri.certs[0]
		t := fmt.Sprintf("%q sha256 %s…, expires %s", rc.Subject, rc.ShortFingerprint(), rc.NotAfter.Format("2006-01-02"))
		if len(ri.certs) > 1 {
			t += fmt.Sprintf(" (+%d more in the bundle)", len(ri.certs)-1)
		}
		if len(ri.mismatch) > 0 {
			// The mismatch first: it must show on a narrow terminal.
			out = append(out, vc.st.Error.Render(fit("  root CA ✗ shares no root with "+strings.Join(ri.mismatch, ", ")+" (mTLS between them fails): "+t, w)))
		} else {
			out = append(out, vc.st.Muted.Render(fit("  root CA "+t, w)))
		}
	}
	return out
}

// controlPlanes draws the control planes pane in h lines: each primary's
// istiod pods (CLUSTER_ID, ready), the clusters it reads and where
// meshscope learned that, and its root CA; under them the selected
// primary's istiod settings, each with where it came from.
func (v *clustersView) controlPlanes(vc viewContext, w, h int) []string {
	cps := vc.ix.cps
	lines := []string{vc.paneTitle(fmt.Sprintf("Control planes (%d): the clusters each primary's istiod reads", len(cps)), v.focus == focusControlPlanes, w)}
	idW := len("PRIMARY")
	for _, r := range cps {
		idW = max(idW, ansi.StringWidth(r.id))
	}
	cols := layoutColumns([]column{
		{title: "PRIMARY", w: min(idW, 24)},
		{title: "ISTIOD", w: 0, grow: 2},
		{title: "CLUSTER_ID", w: 12},
		{title: "READS", w: 0, grow: 3},
		{title: "ROOT CA", w: rootW},
	}, w, 10)
	rows := vc.table(cols, &v.cp, w, h-2, v.focus == focusControlPlanes, func(i int32, sel bool) []string {
		r := cps[i]
		istiod, ist := "no istiod pod seen", vc.st.Muted
		cid, cst := "-", vc.st.Muted
		if len(r.istiods) > 0 {
			p := r.istiods[0]
			istiod, ist = p.Name+" ready", vc.st.OK
			if !p.Ready {
				istiod, ist = p.Name+" not ready", vc.st.Error
			}
			if len(r.istiods) > 1 {
				istiod += fmt.Sprintf(" +%d", len(r.istiods)-1)
			}
			if revs, ready := revisionsCell(r.istiods); revs != "" {
				// A canary upgrade: the revisions first, so a narrow cell
				// still says there are several.
				istiod, ist = revs, vc.st.OK
				if !ready {
					ist = vc.st.Warn
				}
			}
			cid, cst = orDash(p.ClusterID), vc.st.Text
			if p.ClusterID != r.cluster {
				// istiod calls its cluster otherwise (unset: "Kubernetes").
				cst = vc.st.Warn
			}
		}
		reads, rst := readsText(r, vc.ix.snap), vc.st.Text
		if !r.known {
			rst = vc.st.Warn
		}
		root, rtst := rootCell(vc, r.cluster)
		return []string{
			cell(r.id, cols[0].w, vc.sel(vc.st.Text, sel)),
			cell(istiod, cols[1].w, vc.sel(ist, sel)),
			cell(cid, cols[2].w, vc.sel(cst, sel)),
			cell(reads, cols[3].w, vc.sel(rst, sel)),
			cell(root, cols[4].w, vc.sel(rtst, sel)),
		}
	})
	lines = append(lines, rows...)
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	if i, ok := v.cp.selected(); ok && h > 2 {
		id := cps[i].id
		text, guessed := settingsText(vc.ix.snap.SettingsFor(id))
		st := vc.st.Muted
		if guessed {
			st = vc.st.Warn
		}
		lines = append(lines, st.Render(fit("  istiod "+id+" · "+text, w)))
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines[:h]
}

// settingLabels are the short names of istiod's settings in the UI.
var settingLabels = map[string]string{
	model.SettingAmbient:                 "ambient",
	model.SettingAmbientMultiNetwork:     "multi-network",
	model.SettingResolveHostnameGateways: "gateway DNS",
	model.SettingScopeGatewayToNamespace: "Gateways of own namespace",
}

// quietSettings are shown only when on: their default (off) is what
// nearly every mesh runs.
var quietSettings = map[string]bool{model.SettingScopeGatewayToNamespace: true}

// settingsText is an istiod's settings in a few words, grouped by where
// they came from, the source first so that a narrow line still says it:
// "pod istiod-x: ambient on, multi-network on · default: gateway DNS on"
// (pod: its istiod pod's env; --istiod-env; default: istiod's own;
// inferred: from the mesh, no istiod pod could be read). guessed is true
// when one was inferred or the pod sets a value istiod does not read.
func settingsText(st model.IstiodSettings) (text string, guessed bool) {
	var groups, items []string
	from := ""
	flush := func() {
		if len(items) > 0 {
			groups = append(groups, from+": "+strings.Join(items, ", "))
		}
		items = nil
	}
	for _, k := range model.SettingKeys {
		s := st.Get(k)
		if quietSettings[k] && !s.Value {
			continue
		}
		var f string
		switch s.From {
		case model.FromPod:
			f = strings.TrimSpace("pod " + s.Note)
		case model.FromFlag:
			f = "--istiod-env"
		case model.FromInferred:
			f, guessed = "inferred", true
		default:
			f = "default"
			if s.Note != "" {
				// The pod's value is not a boolean: istiod runs with its default.
				f, guessed = "default (the pod's value is no boolean)", true
			}
		}
		if f != from {
			flush()
			from = f
		}
		onOff := "off"
		if s.Value {
			onOff = "on"
		}
		items = append(items, settingLabels[k]+" "+onOff)
	}
	flush()
	return strings.Join(groups, " · "), guessed
}

// revisionsCell names the revisions of a primary's istiod pods when there
// are several ("revisions canary, default (3 pods)"), "" otherwise; ready
// is false when one revision has no ready pod.
func revisionsCell(pods []model.IstiodPod) (text string, ready bool) {
	c := model.Cluster{Istiods: pods}
	revs := c.Revisions()
	if len(revs) < 2 {
		return "", true
	}
	ready = true
	for _, r := range revs {
		if !c.RevisionReady(r) {
			ready = false
		}
	}
	text = fmt.Sprintf("revisions %s (%d pods)", strings.Join(revs, ", "), len(pods))
	if !ready {
		text += ", one not ready"
	}
	return text, ready
}

// readsText is which clusters a control plane reads, and how meshscope
// knows; when it does not, why: its cluster could not be read, or is not
// a context meshscope was given.
func readsText(r cpRow, snap *model.Snapshot) string {
	if !r.known {
		for _, u := range snap.Unread() {
			if u.Cluster == r.cluster {
				return "unknown: " + u.Sentence()
			}
		}
		return "unknown: run with --context " + r.cluster + " or --istiod-debug-address " + r.id + "=HOST:PORT"
	}
	// Where meshscope learned it first, so a narrow cell still says it.
	from := "its secrets"
	if r.from == "clusterz" {
		from = "its clusterz"
	}
	return from + ": " + strings.Join(r.reads, ", ")
}
