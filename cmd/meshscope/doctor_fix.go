package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/model"
)

// doctor --fix-dir: one file per fix and cluster, named by its problem,
// that kubectl replace -f (create -f for a new object, delete -f for a
// deletion: the file's name says which) and meshscope what-if -f take, with
// a comment header saying what it fixes and what what-if predicted; a
// fix that is a command is a shell script with the same header.

// checkFixDir refuses a --fix-dir that exists and is no directory, before
// the mesh is read.
func checkFixDir(dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("--fix-dir %s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("--fix-dir %s: not a directory", dir)
	}
	return nil
}

// writeFixDir writes the first offered proposal of every fix into dir, a
// file per cluster (and per deletion), and records the files in the offer.
func writeFixDir(dir string, fixes []fix.Fix) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--fix-dir %s: %w", dir, err)
	}
	for i := range fixes {
		f := &fixes[i]
		o := f.Best()
		if o == nil {
			continue
		}
		base := fmt.Sprintf("%02d-%s-%s", i+1, f.Problem.Kind, fileSafe(subject(f.Problem)))
		if o.Command != "" {
			name := base + ".sh"
			text := "#!/bin/sh\n" + fix.Header(*f, *o, fix.Manifest{Cluster: f.Problem.Cluster}, name, "(of what the command writes)") + "set -e\n" + o.Command + "\n"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
				return err
			}
			o.Files = append(o.Files, fix.File{Path: filepath.Join(dir, name), Verb: "sh"})
			continue
		}
		if err := writeManifests(dir, base, f, o); err != nil {
			return err
		}
	}
	return nil
}

// writeManifests writes one offer's manifests, a file per cluster and
// verb (kubectl takes one context and one verb per file).
func writeManifests(dir, base string, f *fix.Fix, o *fix.Offer) error {
	var order, whatIf []string
	byFile := map[string][]fix.Manifest{}
	for _, m := range o.Manifests {
		if !m.Shown() {
			continue
		}
		name := base + "-" + fileSafe(m.Cluster)
		if m.Verb() != "replace" {
			name += "-" + m.Verb()
		}
		name += ".yaml"
		if byFile[name] == nil {
			order = append(order, name)
			arg := "-f " + m.Cluster + "=" + name
			if m.Delete {
				arg = "--delete " + arg
			}
			whatIf = append(whatIf, arg)
		}
		byFile[name] = append(byFile[name], m)
	}
	for _, name := range order {
		ms := byFile[name]
		text := fix.Header(*f, *o, ms[0], name, strings.Join(whatIf, " "))
		for _, m := range ms {
			y, err := yaml.Marshal(m.Object.Object)
			if err != nil {
				return err
			}
			text += "---\n" + string(y)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
		o.Files = append(o.Files, fix.File{Path: filepath.Join(dir, name), Cluster: ms[0].Cluster, Context: ms[0].Context, Verb: ms[0].Verb()})
	}
	return nil
}

// subject names what a problem concerns in a file name: its first
// object, else its service, else its cluster.
func subject(p model.Problem) string {
	switch {
	case len(p.Objects) > 0:
		return p.Objects[0].Name
	case p.Service != "":
		return model.ShortHost(p.Service)
	}
	return p.Cluster
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

func fileSafe(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}
