package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// settleHint is how long the UI may be unsettled before the status bar
// says what it still waits for. A mesh of thousands of services takes a
// few seconds to sync and to fetch; past that, a screen that silently
// does not settle leaves a person guessing (issue 26), so it names the
// clusters still syncing and the streams without their full EDS.
const settleHint = 5 * time.Second

// maxWaitingItems bounds the items the status bar names.
const maxWaitingItems = 4

// waitingFor names what keeps the UI from being settled: no snapshot yet,
// clusters still connecting or syncing (in the latest snapshot), and
// sidecar streams that are not up or do not hold istiod's CDS and the EDS
// of every cluster it names yet. Clusters in error or timed out are not
// waited for: the clusters view says what is wrong with them. Empty when
// settled.
func (m *Model) waitingFor() []string {
	if m.feed == nil {
		return nil
	}
	if m.snap == nil {
		return []string{"the clusters' first snapshot"}
	}
	var out []string
	for _, c := range m.snap.Clusters {
		if c.State == model.StateConnecting || c.State == model.StateSyncing {
			out = append(out, c.ID+" "+string(c.State))
		}
	}
	for _, st := range m.status {
		p := st.Progress
		switch {
		case !p.FollowsCDS:
			// a ztunnel, or a stream asking fixed names
		case st.State != xdsclient.StateConnected:
			out = append(out, st.Viewpoint+" "+st.Text())
		case !p.CDS:
			out = append(out, st.Viewpoint+" no CDS yet")
		case p.EDS < p.EDSWanted:
			out = append(out, fmt.Sprintf("%s EDS %d/%d", st.Viewpoint, p.EDS, p.EDSWanted))
		}
	}
	return out
}

// noteWaiting starts or ends the time the UI has been unsettled (on the
// clock tick, with the streams' status just read).
func (m *Model) noteWaiting() {
	switch {
	case len(m.waitingFor()) == 0:
		m.waitingSince = time.Time{}
	case m.waitingSince.IsZero():
		m.waitingSince = m.now()
	}
}

// waitingText is the status bar's "waiting 12s for: …" once the UI has
// been unsettled for settleHint, else "".
func (m *Model) waitingText() string {
	if m.waitingSince.IsZero() || m.now().Sub(m.waitingSince) < settleHint {
		return ""
	}
	items := m.waitingFor()
	if len(items) == 0 {
		return ""
	}
	more := ""
	if len(items) > maxWaitingItems {
		more = fmt.Sprintf(" and %d more", len(items)-maxWaitingItems)
		items = items[:maxWaitingItems]
	}
	return "waiting " + age(m.now(), m.waitingSince) + " for " + strings.Join(items, ", ") + more
}
