package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKrewManifest: krew/meshscope.yaml is a krew Plugin whose platforms are
// exactly the archives .ci/release builds, each installing the
// kubectl-meshscope binary the archive holds.
func TestKrewManifest(t *testing.T) {
	src, err := os.ReadFile("../../krew/meshscope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../.ci/release")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PLATFORMS=\$\{PLATFORMS:-([^}]*)\}`).FindSubmatch(script)
	if m == nil {
		t.Fatal("no PLATFORMS default in .ci/release")
	}
	var want []string
	for _, p := range strings.Fields(string(m[1])) {
		want = append(want, strings.Replace(p, "/", "_", 1))
	}
	sort.Strings(want)

	// Fill the placeholders as .ci/release does.
	text := strings.ReplaceAll(string(src), "${VERSION}", "v1.2.3")
	for _, p := range want {
		text = strings.ReplaceAll(text, "${SHA256_"+p+"}", strings.Repeat("ab", 32))
	}
	if strings.Contains(text, "${") {
		t.Fatalf("placeholders left after filling every platform: %s", regexp.MustCompile(`\$\{[^}]*\}`).FindString(text))
	}
	var plugin struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Version, Homepage, ShortDescription, Description, Caveats string
			Platforms                                                 []struct {
				Selector         struct{ MatchLabels map[string]string }
				URI, Sha256, Bin string
				Files            []struct{ From, To string }
			}
		}
	}
	if err := yaml.UnmarshalStrict([]byte(text), &plugin); err != nil {
		t.Fatal(err)
	}
	if plugin.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || plugin.Kind != "Plugin" || plugin.Metadata.Name != "meshscope" {
		t.Errorf("not a krew Plugin named meshscope: %s %s %s", plugin.APIVersion, plugin.Kind, plugin.Metadata.Name)
	}
	if plugin.Spec.Version != "v1.2.3" || plugin.Spec.ShortDescription == "" || len(plugin.Spec.ShortDescription) > 50 || plugin.Spec.Description == "" {
		t.Errorf("spec: version %q, short description %q", plugin.Spec.Version, plugin.Spec.ShortDescription)
	}
	var got []string
	for _, p := range plugin.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		got = append(got, os+"_"+arch)
		ext, archive := "", ".tar.gz"
		if os == "windows" {
			ext, archive = ".exe", ".zip"
		}
		wantURI := "https://github.com/meshscope/meshscope/releases/download/v1.2.3/meshscope_v1.2.3_" + os + "_" + arch + archive
		if p.URI != wantURI {
			t.Errorf("%s_%s: uri %s, want %s (the name .ci/release gives the archive)", os, arch, p.URI, wantURI)
		}
		if p.Bin != "kubectl-meshscope"+ext {
			t.Errorf("%s_%s: bin %q", os, arch, p.Bin)
		}
		if len(p.Sha256) != 64 {
			t.Errorf("%s_%s: sha256 %q", os, arch, p.Sha256)
		}
		found := false
		for _, f := range p.Files {
			found = found || f.From == p.Bin
		}
		if !found {
			t.Errorf("%s_%s: the bin is not among the files installed", os, arch)
		}
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("krew platforms %v, release builds %v", got, want)
	}
}
