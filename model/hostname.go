package model

import "strings"

// domainSuffix is the cluster domain of service hostnames
// (NAME.NAMESPACE.svc.cluster.local), istiod's default --domain. meshscope
// reads meshes with the default domain only: this is the one place it is
// written.
const domainSuffix = "cluster.local"

// DNSDomain is the DNS domain of a pod's namespace's services
// ("svc.cluster.local"), as in a proxy's node ID.
const DNSDomain = "svc." + domainSuffix

// DefaultTrustDomain is istiod's trust domain when the mesh config names
// none (--trust-domain's default, the same words as the cluster domain).
const DefaultTrustDomain = "cluster.local"

// Hostname is the hostname istiod gives the Kubernetes Service name in
// namespace (kube/conversion.go ServiceHostname).
func Hostname(name, namespace string) string {
	return name + "." + namespace + ".svc." + domainSuffix
}

// FQDN expands a host of Istio config written in namespace ns as istiod
// does for short names (ResolveShortnameToFQDN): "reviews" in "bookinfo"
// is reviews.bookinfo.svc.cluster.local; a name with a dot, "*" and ""
// stay as they are.
func FQDN(host, ns string) string {
	if host == "" || host == "*" || strings.Contains(host, ".") {
		return host
	}
	return Hostname(host, ns)
}

// ShortHost drops the cluster domain of a Service hostname, for tables
// and sentences: helloworld.sample.svc.cluster.local is helloworld.sample.
func ShortHost(hostname string) string {
	return strings.TrimSuffix(hostname, ".svc."+domainSuffix)
}
