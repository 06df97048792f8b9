package lab

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Remote secrets: what istiod (and meshscope) read to reach another cluster.
// The token in each is a TokenRequest token bound to a Secret in the remote
// cluster, so deleting that Secret revokes the token — the lab's way to test
// a revoked credential.

// bindingName is the Secret a remote secret's token is bound to.
func bindingName(reader string) string { return "meshscope-lab-binding-" + reader }

// ReaderRules are the lab's reader role: get/list/watch of everything (a
// superset of istio's reader ClusterRole), and the reviews istiod creates.
var ReaderRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	// istiod validates tokens and checks access through these.
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}

// ensureReader gives the remote cluster a read-only ServiceAccount for the
// reading cluster's istiod (get/list/watch everything, as istio's reader role).
func ensureReader(ctx context.Context, remote *Cluster) error {
	cs := remote.client
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ReaderSA, Namespace: SystemNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(SystemNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "istio-reader-clusterrole"}, Rules: ReaderRules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-reader-clusterrole"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: ReaderSA, Namespace: SystemNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// readerToken issues a new reader token bound to a fresh binding Secret in
// the remote cluster; the previous binding (and so the previous token) is
// deleted, which revokes it.
func readerToken(ctx context.Context, remote *Cluster, reader string, d time.Duration) (string, error) {
	cs := remote.client
	name := bindingName(reader)
	err := cs.CoreV1().Secrets(SystemNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	var bound *corev1.Secret
	for i := 0; i < 50; i++ { // the delete may still be in flight
		bound, err = cs.CoreV1().Secrets(SystemNamespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: SystemNamespace},
		}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return "", fmt.Errorf("%s: token binding secret: %w", remote.Name, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(SystemNamespace).CreateToken(ctx, ReaderSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(d / time.Second)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: bound.Name, UID: bound.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: token for %s: %w", remote.Name, ReaderSA, err)
	}
	return tr.Status.Token, nil
}

// RotateRemoteSecret (re)writes the remote secret for remote in reader with a
// new token; the old token is revoked. It is also how the fixture creates it.
func (l *Lab) RotateRemoteSecret(ctx context.Context, reader, remote string) error {
	tok, err := l.IssueReaderToken(ctx, remote, reader)
	if err != nil {
		return err
	}
	kc, err := l.RemoteKubeconfig(remote, tok)
	if err != nil {
		return err
	}
	return l.WriteRemoteSecret(ctx, reader, RemoteSecretName(remote), map[string][]byte{remote: kc})
}

// IssueReaderToken issues a reader token for remote, bound to a binding
// Secret named after holder (any name: a test's own token), revoking the
// previous token of that holder.
func (l *Lab) IssueReaderToken(ctx context.Context, remote, holder string) (string, error) {
	return l.IssueReaderTokenFor(ctx, remote, holder, readerTokenLife)
}

// readerTokenLife is how long the lab's reader tokens last: a year, as
// istioctl create-remote-secret's do.
const readerTokenLife = 365 * 24 * time.Hour

// IssueReaderTokenFor is IssueReaderToken with a token that lasts d (the
// API server's least is 10 minutes).
func (l *Lab) IssueReaderTokenFor(ctx context.Context, remote, holder string, d time.Duration) (string, error) {
	rc, err := l.cluster(remote)
	if err != nil {
		return "", err
	}
	if err := ensureReader(ctx, rc); err != nil {
		return "", fmt.Errorf("%s: reader account: %w", remote, err)
	}
	return readerToken(ctx, rc, holder, d)
}

// RevokeRemoteSecretToken deletes the binding of the token in the remote
// secret that reader holds for remote: the secret stays, its token stops working.
func (l *Lab) RevokeRemoteSecretToken(ctx context.Context, reader, remote string) error {
	rc, err := l.cluster(remote)
	if err != nil {
		return err
	}
	return rc.client.CoreV1().Secrets(SystemNamespace).Delete(ctx, bindingName(reader), metav1.DeleteOptions{})
}

// WriteRemoteSecret creates or replaces a Secret labelled
// istio/multiCluster=true in the system namespace of cluster, with data as
// given (each key a cluster ID, each value a kubeconfig — or garbage, for
// tests of broken secrets).
func (l *Lab) WriteRemoteSecret(ctx context.Context, cluster, name string, data map[string][]byte) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	api := c.client.CoreV1().Secrets(SystemNamespace)
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: SystemNamespace,
			Labels: map[string]string{"istio/multiCluster": "true"},
		},
		Data: data,
	}
	cur, err := api.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Labels, cur.Data, cur.StringData = want.Labels, want.Data, nil
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// DeleteRemoteSecret deletes a remote secret from cluster's system namespace.
func (l *Lab) DeleteRemoteSecret(ctx context.Context, cluster, name string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().Secrets(SystemNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// RemoteKubeconfig is a kubeconfig for cluster with the given token, as a
// remote secret would carry it (tests build broken variants from it).
func (l *Lab) RemoteKubeconfig(cluster, token string) ([]byte, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, err
	}
	return remoteKubeconfig(c, token)
}

// IssueLimitedToken issues a token in cluster remote for ServiceAccount
// "meshscope-lab-<name>", allowed only what rules grant (e.g. no nodes): a
// remote-secret user with missing RBAC. The account and its ClusterRole are
// (re)written each time; DeleteLimitedUser removes them.
func (l *Lab) IssueLimitedToken(ctx context.Context, remote, name string, rules []rbacv1.PolicyRule) (string, error) {
	return l.IssueLimitedTokenFor(ctx, remote, name, rules, time.Hour)
}

// IssueLimitedTokenFor is IssueLimitedToken with a token that lasts d (the
// API server's least is 10 minutes).
func (l *Lab) IssueLimitedTokenFor(ctx context.Context, remote, name string, rules []rbacv1.PolicyRule, d time.Duration) (string, error) {
	rc, err := l.cluster(remote)
	if err != nil {
		return "", err
	}
	cs := rc.client
	sa := "meshscope-lab-" + name
	if _, err := cs.CoreV1().ServiceAccounts(SystemNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: SystemNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
		if err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: SystemNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(SystemNamespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d / time.Second))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: token for %s: %w", remote, sa, err)
	}
	return tr.Status.Token, nil
}

// DeleteLimitedUser removes what IssueLimitedToken created (its tokens stop
// working with the account).
func (l *Lab) DeleteLimitedUser(ctx context.Context, remote, name string) error {
	rc, err := l.cluster(remote)
	if err != nil {
		return err
	}
	cs := rc.client
	sa := "meshscope-lab-" + name
	for _, del := range []func() error{
		func() error {
			return cs.RbacV1().ClusterRoleBindings().Delete(ctx, sa, metav1.DeleteOptions{})
		},
		func() error { return cs.RbacV1().ClusterRoles().Delete(ctx, sa, metav1.DeleteOptions{}) },
		func() error {
			return cs.CoreV1().ServiceAccounts(SystemNamespace).Delete(ctx, sa, metav1.DeleteOptions{})
		},
	} {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
