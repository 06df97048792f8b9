package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/meshscope/meshscope/model"
)

// writeRevisionTables prints each primary's istiod revisions (their pods,
// the ConfigMap each reads, the tags pointing at it) and the namespaces
// that ask for a revision: what a canary upgrade is in the middle of.
// Nothing when no istiod pod is seen.
func writeRevisionTables(tw *tabwriter.Writer, s *model.Snapshot) {
	header := false
	for i := range s.Clusters {
		c := &s.Clusters[i]
		for _, rev := range c.Revisions() {
			if !header {
				fmt.Fprintln(tw, "PRIMARY\tREVISION\tISTIOD PODS\tCONFIGMAP\tTAGS")
				header = true
			}
			var pods, tags []string
			for _, p := range c.IstiodsOfRevision(rev) {
				name := p.Name
				if !p.Ready {
					name += " (not ready)"
				}
				pods = append(pods, name)
			}
			for _, t := range c.RevisionTags {
				if t.Revision == rev {
					tags = append(tags, t.Tag)
				}
			}
			cm := "-"
			for _, rc := range c.RevisionConfigs {
				if rc.Revision == rev {
					cm = rc.ConfigMap
					if !rc.Found {
						cm += " (none: defaults)"
					}
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, rev, strings.Join(pods, ","), cm, dash(strings.Join(tags, ",")))
		}
	}
	if header {
		fmt.Fprintln(tw)
	}
	header = false
	for _, a := range s.Ambient {
		names := make([]string, 0, len(a.Namespaces))
		for ns := range a.Namespaces {
			names = append(names, ns)
		}
		sort.Strings(names)
		for _, ns := range names {
			name, ok := model.NamespaceRevision(a.Namespaces[ns])
			if !ok {
				continue
			}
			if !header {
				fmt.Fprintln(tw, "CLUSTER\tNAMESPACE\tASKS FOR\tREVISION")
				header = true
			}
			rev, via := s.ResolveRevision(a.Cluster, name)
			if via != "" {
				rev += " (tag " + via + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Cluster, ns, name, rev)
		}
	}
	if header {
		fmt.Fprintln(tw)
	}
}
