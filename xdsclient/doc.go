// Package xdsclient impersonates an Envoy proxy against istiod over ADS and
// records every push it receives.
//
// A Viewpoint ("a proxy in cluster1, network1") becomes a node ID and node
// metadata (node.go), exactly what istiod reads to decide what a proxy there
// is sent. A Client holds one ADS stream (SotW or Delta) for one viewpoint on
// one control plane: it subscribes CDS and then EDS for the clusters CDS names
// (or an explicit EDS list), LDS/RDS on demand, ACKs what decodes and NACKs
// what does not, reconnects with backoff and marks its view stale while it is
// disconnected. Every response, NACK, connect and disconnect becomes an Event
// with the changes against the previous state, so a reader sees pushes, not
// raw protos.
//
// Several viewpoints are several Clients; they may share one gRPC connection
// (Conn) per control plane, so an idle viewpoint costs one HTTP/2 stream and
// two goroutines, not a TCP connection, and one Shared table, so an EDS
// resource pushed identically to several of them is decoded and kept once.
// A one-service client (EDSOnly) asks EDS for its names only, without CDS,
// the way Envoy asks for the clusters it knows: its cost does not grow
// with the mesh.
//
// Typical use (one control plane, two viewpoints on one connection):
//
//	conn, err := xdsclient.Dial(xdsclient.TransportConfig{Address: "127.0.0.1:15010"})
//	vp, err := xdsclient.ParseViewpoint("cluster1/network1", known)
//	c, err := xdsclient.New(xdsclient.Options{
//		Viewpoint: vp, ControlPlane: "cluster1", Conn: conn,
//		EDSNames: []string{"outbound|5000||helloworld.sample.svc.cluster.local"}, // or nil: follow CDS
//		OnEvent: func(ev xdsclient.Event) { ... },
//	})
//	go c.Run(ctx) // reconnects until ctx ends
//	la, ok := c.LoadAssignment("outbound|5000||helloworld.sample.svc.cluster.local")
//	st := c.Status() // State, Stale, Message
//
// The package makes no Kubernetes API calls: ViewpointFromPod copies the
// identity of a Pod object it is handed. Finding istiod, port-forwarding to
// it and reading a real Pod are package session/istiod's; running streams
// for a whole mesh (a viewpoint per network and control plane, retries) is
// package session/live's.
package xdsclient
