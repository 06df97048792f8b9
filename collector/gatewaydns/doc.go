// Package gatewaydns resolves gateway DNS names the way istiod does
// (pilot/pkg/model/network.go: networkGatewayNameCache and dnsClient), so
// that meshscope's gateways are the ones istiod has: the A and AAAA
// records of each name, asked of the servers in resolv.conf (not
// /etc/hosts, not the search list), kept for their TTL (at least 30 s, at
// most 1 h) and asked again when it runs out. A Cache holds the answers by
// name and calls back when a refreshed answer differs, so the collector
// publishes a new snapshot, as istiod pushes.
package gatewaydns
