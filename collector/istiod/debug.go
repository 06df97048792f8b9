package istiod

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// View is istiod's own account of the mesh, from its HTTP debug
// endpoints (port 8080, or 15014; reachable through a port-forward).
type View struct {
	// ControlPlane names the istiod (the cluster it is primary of).
	ControlPlane string `json:"controlPlane"`
	// Clusters is /debug/clusterz: the config cluster first, then one per
	// remote-secret key.
	Clusters []Cluster `json:"clusters"`
	// Gateways is /debug/networkz.
	Gateways []Gateway `json:"gateways"`
}

// Cluster is one row of /debug/clusterz.
type Cluster struct {
	ID         string `json:"id"`
	SecretName string `json:"secretName"`
	SyncStatus string `json:"syncStatus"`
}

// Gateway is one row of /debug/networkz.
type Gateway struct {
	Network   string `json:"Network"`
	Cluster   string `json:"Cluster"`
	Addr      string `json:"Addr"`
	Port      uint32 `json:"Port"`
	HBONEPort uint32 `json:"HBONEPort"`
}

// FetchView reads /debug/clusterz and /debug/networkz from istiod's
// HTTP debug address (host:port or a URL). Every request has a timeout.
func FetchView(ctx context.Context, controlPlane, addr string) (View, error) {
	base := debugBase(addr)
	v := View{ControlPlane: controlPlane}
	if err := getJSON(ctx, base+"/debug/clusterz", &v.Clusters); err != nil {
		return v, err
	}
	if err := getJSON(ctx, base+"/debug/networkz", &v.Gateways); err != nil {
		return v, err
	}
	return v, nil
}

func getJSON(ctx context.Context, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("istiod debug %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("istiod debug %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("istiod debug %s: %s", url, resp.Status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("istiod debug %s: not the JSON istiod writes: %w", url, err)
	}
	return nil
}
