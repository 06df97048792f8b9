package main

// Blank imports that pin the dependencies the design commits to while the
// packages that use them are being written. Remove an entry once a real
// import of that module exists elsewhere in the tree.
import (
	_ "charm.land/bubbles/v2/help"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	_ "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	_ "github.com/sahilm/fuzzy"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/yaml"
)
