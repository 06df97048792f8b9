package watch

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// injectedIdentity reads the istio-proxy container of a pod
// (xdsclient.ProxyContainer, which a pod: viewpoint copies too), or nil.
func injectedIdentity(p *corev1.Pod) *model.InjectedIdentity {
	c := xdsclient.ProxyContainer(p)
	if c == nil {
		return nil
	}
	id := &model.InjectedIdentity{Kind: model.ProxySidecar, Image: c.Image, Version: imageVersion(c.Image), Revision: p.Labels[model.LabelRev]}
	switch {
	case slices.Contains(c.Args, "router"):
		id.Kind = model.ProxyGateway
	case strings.Contains(imageName(c.Image), "ztunnel") || p.Labels["app"] == "ztunnel":
		id.Kind = model.ProxyZtunnel
	}
	for _, e := range c.Env {
		switch e.Name {
		case "ISTIO_META_NETWORK":
			id.Network = e.Value
		case "ISTIO_META_CLUSTER_ID":
			id.ClusterID = e.Value
		case "ISTIO_META_REQUESTED_NETWORK_VIEW":
			id.NetworkView = e.Value
		case "ISTIO_META_ROUTER_MODE":
			id.RouterMode = e.Value
		case "ISTIO_META_UNPRIVILEGED_POD":
			id.Unprivileged, _ = strconv.ParseBool(e.Value) // as istiod's IsUnprivileged reads it
		}
	}
	return id
}

// imageName is the repository part of an image reference (no registry
// path before the last '/', no tag or digest).
func imageName(image string) string {
	if i := strings.LastIndexByte(image, '/'); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.IndexAny(image, ":@"); i >= 0 {
		image = image[:i]
	}
	return image
}

// imageVersion is an image's tag up to its first '-' ("1.28.0" of
// "docker.io/istio/proxyv2:1.28.0-distroless"), or "" for a digest or no tag.
func imageVersion(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := image[i+1:]
	if j := strings.IndexByte(tag, '-'); j > 0 {
		tag = tag[:j]
	}
	return tag
}
