package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
)

// The clusters view's remote-secret facts: each cluster's credential in a
// cell ("token 3d", warning style before it expires) and, for the selected
// cluster, one line with the checks of its remote secret.

// secretW is the width of the SECRET column.
const secretW = 12

// worstSecret is the remote secret of a cluster to show: the one whose
// credential ends first (nil: no secret declares it), and how many more.
func worstSecret(snap *model.Snapshot, id string) (*model.RemoteSecret, int) {
	rs := snap.RemoteSecretsOf(id)
	if len(rs) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(rs, func(a, b model.RemoteSecret) int {
		return secretRank(b) - secretRank(a)
	})
	return &rs[0], len(rs) - 1
}

// secretRank orders secrets worst first: failing, then expiring, then the
// rest.
func secretRank(rs model.RemoteSecret) int {
	switch {
	case rs.Credential.Invalid != "" || rs.Test != nil && rs.Test.Failed != "":
		return 3
	case !rs.Credential.Expires.IsZero():
		return 2
	case rs.Test != nil && !rs.Test.Works():
		return 1
	}
	return 0
}

// secretStyle is how a secret's cell reads (fine: the given style): an
// error when it expired, fails or istiod cannot load it; a warning within
// a week of its expiry, with permissions missing or TLS unverified.
func secretStyle(vc viewContext, rs *model.RemoteSecret, fine lipgloss.Style) lipgloss.Style {
	c, t, now := rs.Credential, rs.Test, vc.now()
	switch {
	case c.Invalid != "" || c.ExpiresWithin(now, 0) || t != nil && t.Failed != "":
		return vc.st.Error
	case c.ExpiresWithin(now, explain.ExpiryWarning) || c.Insecure || t != nil && !t.Works() && t.Skipped == "":
		return vc.st.Warn
	}
	return fine
}

// secretCell is a cluster's remote-secret credential for the table.
func secretCell(vc viewContext, id string) (string, lipgloss.Style) {
	rs, more := worstSecret(vc.ix.snap, id)
	if rs == nil {
		return "-", vc.st.Muted
	}
	t := rs.Credential.Short(vc.now())
	if more > 0 {
		t += fmt.Sprintf(" +%d", more)
	}
	return t, secretStyle(vc, rs, vc.st.Text)
}

// secretDetail is the line about the selected cluster's remote secret:
// which, its credential (until when, as whom), how its server is
// verified, and what trying it found.
func secretDetail(vc viewContext, id string, w int) string {
	rs, more := worstSecret(vc.ix.snap, id)
	if rs == nil {
		return vc.st.Muted.Render(fit("  no remote secret declares it", w))
	}
	c := rs.Credential
	// What is wrong first: on a narrow screen the end is cut.
	cred := c.Short(vc.now())
	if !c.Expires.IsZero() {
		cred += " (until " + c.Expires.UTC().Format("2006-01-02 15:04") + ")"
	}
	tried := rs.Test.Summary()
	if rs.Test != nil && rs.Test.Skipped == "" {
		tried = "tried " + age(vc.now(), rs.Test.At) + " ago: " + strings.TrimPrefix(tried, "server reached, CA verifies it, credential accepted, ")
	}
	parts := []string{cred, tried, fmt.Sprintf("secret %s in %s", rs.Ref.Name, rs.Ref.In)}
	switch {
	case c.Insecure:
		parts = append(parts, "TLS not verified")
	case c.CA == "":
		parts = append(parts, "CA: system roots")
	}
	if sa := model.SubjectAccount(c.Subject); sa != "" {
		parts = append(parts, "as "+sa)
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more secrets", more))
	}
	return secretStyle(vc, rs, vc.st.Muted).Render(fit("  "+strings.Join(parts, " · "), w))
}
