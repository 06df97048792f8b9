package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// serviceHost splits a Service given as NAME.NAMESPACE or as its hostname
// NAME.NAMESPACE.svc.DOMAIN.
func serviceHost(s string) (name, namespace, host string, err error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], model.Hostname(parts[0], parts[1]), nil
	case len(parts) > 3 && parts[2] == "svc" && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], strings.Join(parts, "."), nil
	}
	return "", "", "", fmt.Errorf("--service %q: want NAME.NAMESPACE or NAME.NAMESPACE.svc.DOMAIN (e.g. helloworld.sample)", s)
}

// serviceEDSNames are the EDS cluster names of a Service's ports (only port,
// when not 0): from the snapshot when there is one (the demo), else from
// the Service read in the kube contexts (get only: watch does not sync the
// mesh for one service).
func serviceEDSNames(ctx context.Context, kube istiod.Kube, snap *model.Snapshot, service string, port int32) ([]string, error) {
	name, ns, host, err := serviceHost(service)
	if err != nil {
		return nil, err
	}
	var ports []int32
	if snap != nil {
		svc := snap.Service(host)
		if svc == nil {
			return nil, fmt.Errorf("--service %s: no such service in the mesh", host)
		}
		for _, p := range svc.Ports {
			ports = append(ports, p.Port)
		}
	} else if ports, err = kube.ServicePorts(ctx, ns, name); err != nil {
		return nil, fmt.Errorf("--service %s: %w (or give its EDS names with --resource)", host, err)
	}
	if port != 0 {
		if !slices.Contains(ports, port) {
			return nil, fmt.Errorf("--service %s has no port %d (ports: %v)", host, port, ports)
		}
		ports = []int32{port}
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = horizon.EDSClusterName(host, p)
	}
	return names, nil
}
