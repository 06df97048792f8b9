package tui

import (
	"testing"

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
