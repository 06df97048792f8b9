package xdsclient

import "time"

// EventType says what an Event is: a response of one resource type, or a
// change of the stream.
type EventType string

// Event types. A response is typed by its resource type, spelled the same
// (EventCDS = "cds" for a CDS response); the others mark the stream's life.
const (
	EventCDS EventType = EventType(CDS) // a CDS response
	EventEDS EventType = EventType(EDS) // an EDS response
	EventLDS EventType = EventType(LDS) // an LDS response
	EventRDS EventType = EventType(RDS) // an RDS response

	EventConnect    EventType = "connect"    // first stream of this client is up
	EventReconnect  EventType = "reconnect"  // a stream is up again after a disconnect
	EventDisconnect EventType = "disconnect" // the stream ended; the view is stale
	EventNACK       EventType = "nack"       // a response was rejected; see Error
	EventError      EventType = "error"      // a connection attempt failed; see Message
)

// responseEvent is the event type of a response of resource type t.
func responseEvent(t Type) EventType { return EventType(t) }

// Event is one thing that happened on a stream. Every response is an event
// (Type = its resource type), and so is every NACK, connect, disconnect and
// failed attempt: a reader can tell "nothing changed" from "we were blind".
type Event struct {
	Seq          uint64    `json:"seq"`
	Time         time.Time `json:"time"`
	ControlPlane string    `json:"controlPlane"`
	Viewpoint    string    `json:"viewpoint"`
	// Type is what happened: a response (EventCDS...) or a stream change.
	Type EventType `json:"type"`
	// ResourceType is the xDS type a nack is about.
	ResourceType Type   `json:"resourceType,omitempty"`
	Version      string `json:"version,omitempty"`
	Nonce        string `json:"nonce,omitempty"`
	// Resources is the number of resources in the response (for delta, the
	// changed ones); Bytes their encoded size.
	Resources int `json:"resources"`
	Bytes     int `json:"bytes"`
	// Added, Removed and Changed name resources, against the previous state.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Endpoints lists endpoint changes of an eds event.
	Endpoints []EndpointChange `json:"endpoints,omitempty"`
	// Addresses lists workload and service changes of a wds event.
	Addresses []AddressChange `json:"addresses,omitempty"`
	// Error is the NACK reason, or the cause of a disconnect or failed attempt.
	Error string `json:"error,omitempty"`
	// Message is a sentence for a person (state events).
	Message string `json:"message,omitempty"`
	// Attempt counts connection attempts since the last good stream.
	Attempt int `json:"attempt,omitempty"`
}

// Endpoint change kinds.
const (
	EndpointAdded   = "added"
	EndpointRemoved = "removed"
	EndpointWeight  = "weight"  // same address and port, new weight
	EndpointChanged = "changed" // same address, port and weight; other fields differ
)

// EndpointChange is one endpoint that differs between two EDS states of a cluster.
type EndpointChange struct {
	Cluster   string `json:"cluster"`
	Change    string `json:"change"`
	Address   string `json:"address"`
	Port      uint32 `json:"port"`
	Weight    uint32 `json:"weight"`
	OldWeight uint32 `json:"oldWeight,omitempty"`
	Health    string `json:"health,omitempty"`
	TLSMode   string `json:"tlsMode,omitempty"`
	// WorkloadCluster is the cluster from `istio.workload` (for a gateway
	// endpoint, the cluster whose pods it stands for).
	WorkloadCluster string `json:"workloadCluster,omitempty"`
	// Workload is the workload `istio.workload` names: the pod's
	// Deployment (or the pod itself when nothing owns it).
	Workload string `json:"workload,omitempty"`
}
