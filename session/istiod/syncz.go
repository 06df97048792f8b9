package istiod

import (
	"context"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// SyncStatus and ResourceStatus are the model's (model/istiodview.go).
type (
	SyncStatus     = model.SyncStatus
	ResourceStatus = model.ResourceStatus
)

// Type URLs of the xDS types istioctl proxy-status shows.
const (
	TypeCDS = model.TypeCDS
	TypeLDS = model.TypeLDS
	TypeRDS = model.TypeRDS
	TypeEDS = model.TypeEDS
	typeWDS = model.TypeWDS
)

// FetchSyncz reads /debug/syncz from istiod's HTTP debug address (host:port
// or a URL): every proxy connected to that istiod.
func FetchSyncz(ctx context.Context, addr string) ([]SyncStatus, error) {
	var out []SyncStatus
	if err := getJSON(ctx, debugBase(addr)+"/debug/syncz", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func debugBase(addr string) string {
	if !strings.Contains(addr, "://") {
		return "http://" + addr
	}
	return addr
}
