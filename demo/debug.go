package demo

import (
	"encoding/json"
	"net"
	"net/http"
	"time"

	"github.com/meshscope/meshscope/model"
)

// debugServer is the demo control plane's istiod debug endpoint, on a
// loopback listener the demo owns: /debug/syncz (the proxies connected to
// it, fleet.go), /debug/clusterz and /debug/networkz (the clusters and
// gateways it uses, from the snapshot it serves, so istiod's opinion and
// meshscope's agree as they do with a healthy istiod). meshscope reads it
// as it reads a real istiod's port 8080: the fleet, :proxies, :map and
// doctor's proxy checks work in the demo.
type debugServer struct {
	lis     net.Listener
	srv     *http.Server
	d       *Demo
	started time.Time
	// serving is closed when Serve has returned.
	serving chan struct{}
}

func newDebugServer(d *Demo) (*debugServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &debugServer{lis: lis, d: d, started: time.Now()}
	mux := http.NewServeMux()
	// Until the control plane serves a settled snapshot it answers 503,
	// as an istiod that has not synced its clusters would not be asked:
	// a half-synced clusterz would read as istiod disagreeing.
	handle := func(path string, body func(*model.Snapshot) any) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			snap := d.xds.snapshot()
			if snap == nil || !snap.Settled() {
				http.Error(w, "demo control plane not synced yet", http.StatusServiceUnavailable)
				return
			}
			reply(w, body(snap))
		})
	}
	handle("/debug/syncz", func(snap *model.Snapshot) any {
		return d.xds.conns.syncz(snap, d.ControlPlane, d.planted(), s.started)
	})
	handle("/debug/clusterz", func(snap *model.Snapshot) any { return clusterz(snap, d.ControlPlane) })
	handle("/debug/networkz", func(snap *model.Snapshot) any { return networkz(snap, d.ControlPlane) })
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.serving = make(chan struct{})
	go func() { defer close(s.serving); _ = s.srv.Serve(lis) }()
	return s, nil
}

func (s *debugServer) address() string { return s.lis.Addr().String() }

// stop closes the server and its connections and waits for Serve to
// return.
func (s *debugServer) stop() {
	_ = s.srv.Close()
	<-s.serving
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// clusterz lists the control plane's config cluster, then every cluster
// of a remote secret held in it, synced or not as the collector (which
// reads the same secrets) found it.
func clusterz(snap *model.Snapshot, cp string) []model.IstiodCluster {
	out := []model.IstiodCluster{}
	if snap == nil {
		return out
	}
	out = append(out, model.IstiodCluster{ID: cp, SyncStatus: "synced"})
	for _, c := range snap.Clusters {
		secrets := c.SecretsFrom(cp)
		if c.ID == cp || c.State == model.StateRemoved || len(secrets) == 0 {
			continue
		}
		status := "synced"
		if c.State != model.StateSynced {
			status = "timeout"
		}
		out = append(out, model.IstiodCluster{ID: c.ID, SecretName: secrets[0].Name, SyncStatus: status})
	}
	return out
}

// networkz lists the gateways the control plane uses.
func networkz(snap *model.Snapshot, cp string) []model.IstiodGateway {
	out := []model.IstiodGateway{}
	if snap == nil {
		return out
	}
	for _, g := range snap.Gateways {
		if !g.Hostname && g.UsedBy(cp) {
			out = append(out, model.IstiodGateway{Network: g.Network, Cluster: g.Cluster, Addr: g.Address, Port: g.Port, HBONEPort: g.HBONEPort})
		}
	}
	return out
}
