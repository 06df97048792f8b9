package xdsclient

import (
	"reflect"
	"slices"
	"strings"
)

// epKey identifies an endpoint within one cluster; a struct key keeps the
// diff of a 10,000-endpoint push free of string building. nth tells apart
// entries with the same address and port (istiod sends a gateway once per
// locality): the nth occurrence in one state matches the nth in the other.
type epKey struct {
	addr string
	port uint32
	nth  uint32
}

// diffEndpoints compares two states of one cluster's endpoints. Endpoints
// are matched by address and port; a different weight is a "weight" change,
// any other difference (health, locality, metadata) a "changed" one. The
// result is in a stable order: removals, then the new state's order.
//
// The changes own their strings: the fast EDS decoder's strings are slices
// of the whole response, and a change kept in a timeline for hours must
// not keep the push it came from alive.
func diffEndpoints(old, cur LoadAssignment) []EndpointChange {
	name := cur.Cluster
	if name == "" {
		name = old.Cluster
	}
	name = strings.Clone(name)
	// istiod sends endpoints in a stable order, so most pushes keep every
	// endpoint at its index: compare in place and skip building a map.
	if len(old.Endpoints) == len(cur.Endpoints) {
		var out []EndpointChange
		inPlace := true
		for i, e := range cur.Endpoints {
			o := old.Endpoints[i]
			if o.Address != e.Address || o.Port != e.Port {
				inPlace = false
				break
			}
			out = appendModified(out, name, o, e)
		}
		if inPlace {
			return out
		}
	}
	prev := make(map[epKey]int, len(old.Endpoints))
	for i, e := range old.Endpoints {
		k := epKey{e.Address, e.Port, 0}
		for _, dup := prev[k]; dup; _, dup = prev[k] {
			k.nth++
		}
		prev[k] = i
	}
	var out []EndpointChange
	seen := make([]bool, len(old.Endpoints))
	for _, e := range cur.Endpoints {
		k := epKey{e.Address, e.Port, 0}
		i, ok := prev[k]
		for ok && seen[i] { // an earlier duplicate in cur took it
			k.nth++
			i, ok = prev[k]
		}
		if !ok {
			out = append(out, change(name, EndpointAdded, e))
			continue
		}
		seen[i] = true
		o := old.Endpoints[i]
		out = appendModified(out, name, o, e)
	}
	var removed []EndpointChange
	for i, e := range old.Endpoints {
		if !seen[i] {
			removed = append(removed, change(name, EndpointRemoved, e))
		}
	}
	return append(removed, out...)
}

// change records one endpoint's change, with copies of its strings (see
// DiffEndpoints); Health is one of the enum's constant names.
func change(cluster, kind string, e Endpoint) EndpointChange {
	return EndpointChange{
		Cluster: cluster, Change: kind, Address: strings.Clone(e.Address), Port: e.Port, Weight: e.Weight,
		Health: e.Health, TLSMode: strings.Clone(e.TLSMode), WorkloadCluster: strings.Clone(e.Workload.Cluster), Workload: strings.Clone(e.Workload.Name),
	}
}

// resourceDiff is what a response changed in one type's state.
type resourceDiff struct {
	added, removed, changed []string
	endpoints               []EndpointChange
}

// update records one resource's update into d. The names recorded are
// copies: an event outlives the response its names were decoded from.
func (d *resourceDiff) update(name string, old any, had bool, cur any) {
	if !had {
		d.added = append(d.added, strings.Clone(name))
		if la, ok := cur.(LoadAssignment); ok {
			d.endpoints = append(d.endpoints, diffEndpoints(LoadAssignment{Cluster: name}, la)...)
		}
		return
	}
	if la, ok := cur.(LoadAssignment); ok {
		ch := diffEndpoints(old.(LoadAssignment), la)
		if len(ch) > 0 {
			d.changed = append(d.changed, strings.Clone(name))
			d.endpoints = append(d.endpoints, ch...)
		}
		return
	}
	if !reflect.DeepEqual(old, cur) {
		d.changed = append(d.changed, strings.Clone(name))
	}
}

func (d *resourceDiff) remove(name string, old any) {
	d.removed = append(d.removed, strings.Clone(name))
	if la, ok := old.(LoadAssignment); ok {
		d.endpoints = append(d.endpoints, diffEndpoints(la, LoadAssignment{Cluster: name})...)
	}
}

func (d *resourceDiff) sort() {
	slices.Sort(d.added)
	slices.Sort(d.removed)
	slices.Sort(d.changed)
}

// appendModified adds the change from o to e, the same endpoint (address
// and port) in two pushes: its weight, or anything else, or nothing.
func appendModified(out []EndpointChange, name string, o, e Endpoint) []EndpointChange {
	// The group's weight changes with every endpoint added to or removed
	// from its locality: that is those endpoints' change, not this one's.
	o.LocalityWeight, e.LocalityWeight = 0, 0
	switch {
	case o.Weight != e.Weight:
		c := change(name, EndpointWeight, e)
		c.OldWeight = o.Weight
		return append(out, c)
	case o != e:
		return append(out, change(name, EndpointChanged, e))
	}
	return out
}
