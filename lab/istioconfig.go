package lab

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// ApplyIstioConfig creates one Istio config object (a DestinationRule, a
// PeerAuthentication, ...) from YAML in cluster; DeleteIstioConfig removes
// it. istiod reads Istio config from its own (config) cluster.
func (l *Lab) ApplyIstioConfig(ctx context.Context, cluster, doc string) error {
	u, api, err := l.istioObject(cluster, doc)
	if err != nil {
		return err
	}
	_, err = api.Create(ctx, u, metav1.CreateOptions{})
	return err
}

// DeleteIstioConfig deletes the object the YAML names (it is not an error
// when it is gone already).
func (l *Lab) DeleteIstioConfig(ctx context.Context, cluster, doc string) error {
	u, api, err := l.istioObject(cluster, doc)
	if err != nil {
		return err
	}
	err = api.Delete(ctx, u.GetName(), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (l *Lab) istioObject(cluster, doc string) (*unstructured.Unstructured, dynamic.ResourceInterface, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, nil, err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return nil, nil, fmt.Errorf("istio config: %w", err)
	}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil || u.GetKind() == "" || u.GetName() == "" {
		return nil, nil, fmt.Errorf("istio config: want apiVersion, kind and metadata.name")
	}
	// Resources are the lower-case plural of the kind (ServiceEntry:
	// serviceentries; Gateway: gateways).
	plural := strings.ToLower(u.GetKind()) + "s"
	if p, ok := strings.CutSuffix(plural, "ys"); ok && p != "" && !strings.ContainsAny(p[len(p)-1:], "aeiou") {
		plural = p + "ies"
	}
	gvr := gv.WithResource(plural)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, nil, err
	}
	return u, dyn.Resource(gvr).Namespace(u.GetNamespace()), nil
}
