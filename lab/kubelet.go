package lab

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// The lab has no kubelet, so `kubectl port-forward` (and meshscope's own
// port-forward to istiod, its default way in when no --xds-address is
// given) would stop at the API server: "pod does not have a host" or "dial
// tcp ...:10250". The lab's kubelet stand-in is the part of a kubelet's
// streaming server that port-forwarding reaches: the API server proxies
// POST /portForward/NAMESPACE/POD to the node's kubelet endpoint, and this
// serves it with the kubelet's own handler (k8s.io/cri-streaming), forwarding
// each requested pod port to a loopback address (istiod's real ports).
// Everything in between — the API server's pods/portforward subresource,
// authorization, the SPDY upgrade, its proxy to the node — is the real thing.

// KubeletForward maps one pod port to the loopback address that serves it.
type KubeletForward struct {
	Namespace, Pod string
	Port           int32
	Target         string // host:port
}

// ParseKubeletForward reads NAMESPACE/POD:PORT=HOST:PORT.
func ParseKubeletForward(s string) (KubeletForward, error) {
	lhs, target, ok := strings.Cut(s, "=")
	if !ok || target == "" {
		return KubeletForward{}, fmt.Errorf("forward %q: want NAMESPACE/POD:PORT=HOST:PORT", s)
	}
	podRef, portStr, ok := strings.Cut(lhs, ":")
	ns, pod, ok2 := strings.Cut(podRef, "/")
	if !ok || !ok2 || ns == "" || pod == "" {
		return KubeletForward{}, fmt.Errorf("forward %q: want NAMESPACE/POD:PORT=HOST:PORT", s)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return KubeletForward{}, fmt.Errorf("forward %q: bad port %q", s, portStr)
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		return KubeletForward{}, fmt.Errorf("forward %q: bad target: %w", s, err)
	}
	return KubeletForward{Namespace: ns, Pod: pod, Port: int32(port), Target: target}, nil
}

func (f KubeletForward) String() string {
	return fmt.Sprintf("%s/%s:%d=%s", f.Namespace, f.Pod, f.Port, f.Target)
}

// KubeletHandler serves /portForward/NAMESPACE/POD[/UID] for the given
// forwards; logf (may be nil) hears about every forwarded connection.
func KubeletHandler(forwards []KubeletForward, logf func(format string, args ...any)) http.Handler {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	fw := &kubeletForwarder{targets: map[string]string{}, logf: logf}
	pods := map[string]bool{}
	for _, f := range forwards {
		fw.targets[fmt.Sprintf("%s/%s:%d", f.Namespace, f.Pod, f.Port)] = f.Target
		pods[f.Namespace+"/"+f.Pod] = true
	}
	mux := http.NewServeMux()
	serve := func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("ns") + "/" + r.PathValue("pod")
		if !pods[key] {
			http.Error(w, "pod does not exist", http.StatusNotFound)
			return
		}
		opts, err := portforward.NewV4Options(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		logf("port-forward session for %s (%s)", key, r.Header.Get("Upgrade"))
		// The kubelet's defaults: 4 h idle timeout, 30 s to open a stream pair.
		portforward.ServePortForward(w, r, fw, key, r.PathValue("uid"), opts, 4*time.Hour, 30*time.Second, portforward.SupportedProtocols)
	}
	for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc("GET "+p, serve)
		mux.HandleFunc("POST "+p, serve)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	return mux
}

type kubeletForwarder struct {
	targets map[string]string
	logf    func(string, ...any)
}

// PortForward copies one forwarded connection to and from its target, as
// the kubelet (containerd's CRI port-forward) does with the pod's network
// namespace: when either direction ends — the pod closed its end, or the
// client its — the other gets a second to finish, then both close. A pod
// whose process died so ends the client's stream too, and the client sees
// its connection drop, as it would against a real kubelet.
func (k *kubeletForwarder) PortForward(ctx context.Context, pod, _ string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	target, ok := k.targets[fmt.Sprintf("%s:%d", pod, port)]
	if !ok {
		return fmt.Errorf("pod %s has no port %d forwarded in the lab", pod, port)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return fmt.Errorf("pod %s port %d: %w", pod, port, err)
	}
	defer conn.Close()
	k.logf("forwarding %s:%d to %s", pod, port, target)
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- err
	}()
	go func() {
		_, err := io.Copy(stream, conn)
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil
	}
	select {
	case e := <-done:
		err = cmp.Or(err, e)
	case <-time.After(forwardLinger):
	case <-ctx.Done():
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// forwardLinger is how long the other direction of a forward may finish
// after one ended.
const forwardLinger = time.Second

// ServeKubelet serves KubeletHandler over TLS on addr with a self-signed
// certificate (the lab's API servers have no --kubelet-certificate-authority,
// so they do not verify it, as a default kube-apiserver does not) until ctx
// ends.
func ServeKubelet(ctx context.Context, addr string, forwards []KubeletForward, logf func(string, ...any)) error {
	cert, err := selfSignedCert("lab-node", net.ParseIP("127.0.0.1"))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           KubeletHandler(forwards, logf),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	err = srv.ServeTLS(ln, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func selfSignedCert(cn string, ip net.IP) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{ip},
		DNSNames:     []string{cn},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// kubeletBin is the stand-in's binary under .lab/bin.
const kubeletBin = "lab-kubelet"

// IstiodPod is the name of the Pod object that stands for cluster's istiod
// (the process runs out of cluster with the same POD_NAME).
func IstiodPod(cluster string) string { return "istiod-local-" + cluster }

// IstiodPodOf is the name of the Pod that stands for an istiod: its
// revision's after the cluster, for a revision other than the default.
func IstiodPodOf(s IstiodSpec) string { return "istiod-local-" + s.Name() }

// labNode is the Node the istiod Pods run on; its kubelet endpoint is the
// stand-in.
const labNode = "lab-node"

// startKubelet registers, in each cluster that has an istiod, a Node whose
// kubelet endpoint is the stand-in and a Running, Ready Pod labelled
// app=istiod on it (what istioctl and meshscope look for), then starts the
// stand-in forwarding the Pod's 15010, 15012, 8080 and 15014 to that
// istiod's real ports.
func (l *Lab) startKubelet(ctx context.Context) error {
	if len(l.istiods) == 0 {
		return nil
	}
	for _, is := range l.istiods {
		c := l.clusters[is.Cluster]
		if err := registerIstiodPod(ctx, c, l.cfg.KubeletPort, is.IstiodSpec, l.istiodSettingsEnv()); err != nil {
			return fmt.Errorf("%s: istiod pod: %w", is.Name(), err)
		}
	}
	return l.runKubelet(ctx)
}

// runKubelet starts the stand-in with a forward of each istiod pod's
// 15010, 15012, 8080 and 15014 to that istiod's real ports.
func (l *Lab) runKubelet(ctx context.Context) error {
	args := []string{"-listen", fmt.Sprintf("127.0.0.1:%d", l.cfg.KubeletPort)}
	for _, is := range l.istiods {
		for _, p := range [][2]int{{15010, is.GRPC}, {15012, is.SecureGRPC}, {8080, is.HTTP}, {15014, is.Monitoring}} {
			f := KubeletForward{Namespace: SystemNamespace, Pod: IstiodPodOf(is.IstiodSpec), Port: int32(p[0]), Target: fmt.Sprintf("127.0.0.1:%d", p[1])}
			args = append(args, "-forward", f.String())
		}
	}
	l.kubelet = &proc{
		Name:    "lab-kubelet",
		Bin:     filepath.Join(BinDir(l.cfg.Root), kubeletBin),
		Args:    args,
		Dir:     l.cfg.Dir,
		LogPath: filepath.Join(l.cfg.Dir, "logs", "lab-kubelet.log"),
	}
	if err := l.kubelet.start(l.cfg.Detach); err != nil {
		return err
	}
	if err := l.saveState(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed, as the API servers accept it
	}}
	return waitFor(ctx, "lab kubelet", 30*time.Second, l.kubelet, func() error {
		resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", l.cfg.KubeletPort))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

func registerIstiodPod(ctx context.Context, c *Cluster, kubeletPort int, spec IstiodSpec, settings []string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: labNode}}
	created, err := c.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // a second revision's istiod in the cluster
		return createIstiodPod(ctx, c, spec, settings)
	}
	if err != nil {
		return err
	}
	created.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
		Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
	}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return createIstiodPod(ctx, c, spec, settings)
}

// createIstiodPod creates the Pod that stands for the istiod of cluster c,
// its discovery container carrying the settings the process runs with.
func createIstiodPod(ctx context.Context, c *Cluster, spec IstiodSpec, settings []string) error {
	env := map[string]string{"CLUSTER_ID": c.Name, "REVISION": spec.RevisionName(), "POD_NAMESPACE": SystemNamespace}
	for _, kv := range settings {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return kubesim.CreatePod(ctx, c.client, kubesim.Pod{
		Namespace: SystemNamespace, Name: IstiodPodOf(spec), IP: c.PodPrefix + istiodPodIPSuffix(spec), Node: labNode,
		Labels: map[string]string{"app": "istiod", "istio": "pilot", "istio.io/rev": spec.RevisionName()},
		// What the istiod Deployment's discovery container sets and the
		// process runs with: the ID it calls its own cluster, and its
		// settings (istiodSettingsEnv).
		Container: "discovery", Image: "example.invalid/istio/pilot:" + IstiodVersion,
		Env: env,
	})
}
