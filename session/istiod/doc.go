// Package istiod reaches istiod from outside the mesh, read-only, the way
// istioctl does:
//
//   - FindPod picks the istiod Pod of a namespace (Running, Ready, newest;
//     narrowed by revision);
//   - StartPortForward / StartPortForwardTo forward a local port to a Pod
//     through the API server's pods/portforward subresource, and heal when
//     that connection ends;
//   - FetchView reads istiod's own view of the mesh from its HTTP debug
//     endpoints (/debug/clusterz, /debug/networkz);
//   - Kube ties these to a kubeconfig read like kubectl's: the istiod of
//     the first context, and real Pods to copy a proxy identity from.
//
// Speaking xDS to istiod is package xdsclient's; this package only gets a
// caller to istiod's door.
package istiod
