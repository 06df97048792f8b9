package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// groupExamples is how many subjects a merged row names.
const groupExamples = 3

// group merges problems of the same cause into one row with a count, so
// that one broken setting over forty pods is one row, not forty. Problems
// without a grouping, and causes that occur once, keep their own sentence.
// The order of first occurrence is kept.
func group(ps []model.Problem) []model.Problem {
	type acc struct {
		at       int
		subjects []string
		clusters map[string]bool
		services map[string]bool
		hosts    []string // the services, in order of occurrence
		objects  map[model.ObjectRef]bool
	}
	byKey := map[string]*acc{}
	var out []model.Problem
	for _, p := range ps {
		if p.Group == nil {
			out = append(out, p)
			continue
		}
		k := string(p.Severity) + "\x00" + string(p.Kind) + "\x00" + p.Group.Key
		a := byKey[k]
		if a == nil {
			a = &acc{at: len(out), clusters: map[string]bool{}, services: map[string]bool{}, objects: map[model.ObjectRef]bool{}}
			byKey[k] = a
			out = append(out, p)
		}
		if len(a.subjects) == 0 {
			out[a.at].Objects = slices.Clone(p.Objects) // the row's own, merged into below
		} else {
			for _, o := range p.Objects {
				if !a.objects[o] {
					out[a.at].Objects = append(out[a.at].Objects, o)
				}
			}
		}
		for _, o := range p.Objects {
			a.objects[o] = true
		}
		a.subjects = append(a.subjects, p.Group.Subject)
		a.clusters[p.Cluster] = true
		if !a.services[p.Service] && p.Service != "" {
			a.hosts = append(a.hosts, p.Service)
		}
		a.services[p.Service] = true
	}
	for _, a := range byKey {
		if len(a.subjects) < 2 {
			continue
		}
		p := &out[a.at]
		if len(a.services) == 1 && p.Service != "" {
			// One service throughout: its name need not start every example.
			prefix := model.ShortHost(p.Service) + " "
			for i, s := range a.subjects {
				a.subjects[i] = strings.TrimPrefix(s, prefix)
			}
		}
		p.Count = len(a.subjects)
		p.Examples = append([]string(nil), a.subjects[:min(groupExamples, len(a.subjects))]...)
		ex := strings.Join(p.Examples, ", ")
		if more := len(a.subjects) - len(p.Examples); more > 0 {
			ex += fmt.Sprintf(" and %d more", more)
		}
		p.Sentence = strings.NewReplacer("{n}", fmt.Sprint(p.Count), "{examples}", ex).Replace(p.Group.Format)
		if len(a.clusters) > 1 {
			p.Cluster = ""
		}
		if len(a.services) > 1 {
			p.Service, p.Services = "", a.hosts
		}
	}
	return out
}
