package tui

import (
	"testing"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// TestRowsApartFromStyles: the render steps yield text with tokens, so a
// row is checked as text and its meaning as tokens, without a theme.
func TestRowsApartFromStyles(t *testing.T) {
	r := problemRow{p: model.Problem{Severity: model.SeverityError, Kind: model.ProblemLeak, Cluster: "cluster2", Service: "helloworld.sample.svc.cluster.local", Sentence: "leaks"}, wi: whatIfResolved}
	cells := problemCells(r, true)
	want := []span{sp(themes.OK, "RESOLVED"), sp(themes.Error, "error"), sp(themes.Error, "leak"),
		sp(themes.Accent, "helloworld.sample.svc.cluster.local (cluster2)"), sp(themes.Text, "leaks")}
	if len(cells) != len(want) {
		t.Fatalf("cells %v, want %v", cells, want)
	}
	for i := range want {
		if cells[i] != want[i] {
			t.Errorf("cell %d = %v, want %v", i, cells[i], want[i])
		}
	}
	head := columnHead("cluster1/network1", explain.Mismatch, 2, true, 30)
	if got := head[0].text(); got != fit("▌cluster1/network1", 30) || head[0][0].tok != themes.Accent {
		t.Errorf("head %q (%s)", got, head[0][0].tok)
	}
	if got := head[1].text(); got != " verdict "+fit("mismatch (2 differences)", 21) || head[1][1].tok != themes.Error {
		t.Errorf("verdict line %q (%s)", got, head[1][1].tok)
	}
	if got := truncateLine(line{sp(themes.Text, "abc"), sp(themes.Error, "defgh")}, 6); got.text() != "abcde…" || got[1].tok != themes.Error {
		t.Errorf("truncateLine = %q", got.text())
	}
}
