package demo

import (
	"bytes"
	"log/slog"
	"sync"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/xdsclient"
)

// wdsServer is the workload API part of the demo's control plane: what
// istiod in ambient multi-network mode sends every ztunnel (WDS, type
// istio.workload.Address, Delta ADS). Like istiod, it holds one collection
// for every client (WDS does not depend on the ztunnel): the resources
// analysis/ambient predicts for the control plane's cluster, encoded with
// xdsclient.EncodeWDSAddress. Only resources whose bytes changed are
// pushed, and removed ones are named, as istiod does.
type wdsServer struct {
	cache        *cachev3.LinearCache
	controlPlane string
	log          *slog.Logger

	mu   sync.Mutex
	held map[string][]byte // the bytes served, by resource name
}

func newWDSServer(controlPlane string, log *slog.Logger) *wdsServer {
	return &wdsServer{cache: cachev3.NewLinearCache(xdsclient.AddressTypeURL), controlPlane: controlPlane, log: log, held: map[string][]byte{}}
}

// wdsResource serves bytes encoded elsewhere: an empty message whose
// unknown fields are the Address's wire bytes marshals to exactly them
// (the type URL on the wire is the request's).
type wdsResource struct {
	*emptypb.Empty
	name string
}

func (r wdsResource) GetName() string { return r.name }

func newWDSResource(name string, b []byte) types.Resource {
	m := &emptypb.Empty{}
	m.ProtoReflect().SetUnknown(protoreflect.RawFields(b))
	return wdsResource{Empty: m, name: name}
}

// update serves the prediction of a new snapshot. Without ambient in the
// mesh it serves what istiod would too: the services and pods, with no
// split-horizon workloads unless some service is global.
func (s *wdsServer) update(pv *plane.View) {
	res := pv.Ambient().Resources()
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := map[string]types.Resource{}
	seen := make(map[string]bool, len(res))
	for _, a := range res {
		seen[a.Name] = true
		b, err := xdsclient.EncodeWDSAddress(a)
		if err != nil {
			s.log.Warn("demo WDS: resource does not encode", "name", a.Name, "err", err)
			continue
		}
		if old, ok := s.held[a.Name]; ok && bytes.Equal(old, b) {
			continue
		}
		s.held[a.Name] = b
		changed[a.Name] = newWDSResource(a.Name, b)
	}
	var removed []string
	for n := range s.held {
		if !seen[n] {
			removed = append(removed, n)
			delete(s.held, n)
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return
	}
	if err := s.cache.UpdateResources(changed, removed); err != nil {
		s.log.Warn("demo WDS: update", "err", err)
	}
}
