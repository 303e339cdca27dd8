package imageverify

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// TestPullSecrets: a registry that needs credentials is reached with the
// workload's imagePullSecrets, or its ServiceAccount's, read by name; with
// neither it is an error (failurePolicy decides), never a verdict; and the
// Secrets are read only when the cache cannot answer.
func TestPullSecrets(t *testing.T) {
	host := imageverifytest.ServeAuth(t, "ci", "s3cret")
	auth := base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))
	dockerConfig := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "shop"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(dockerConfig)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "builder-cred", Namespace: "build"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(dockerConfig)}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "build"}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "builder-cred"}}},
	)
	creds := PullSecrets(client)
	r := Requirement{ID: "ecdsa", Attestors: []Attestor{recordedKey(t, "ecdsa")}}
	for _, tc := range []struct {
		name, namespace string
		w               Workload
		want            string // in Err; "" for verified
	}{
		{name: "imagePullSecrets", namespace: "shop", w: Workload{PullSecrets: []string{"regcred"}}},
		{name: "the ServiceAccount's", namespace: "build", w: Workload{ServiceAccount: "builder"}},
		{name: "a Secret of another namespace", namespace: "build", w: Workload{PullSecrets: []string{"regcred"}}, want: "401 Unauthorized"},
		{name: "none", namespace: "shop", want: "401 Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := New(Options{})
			ctx := WithKeychain(context.Background(), creds(context.Background(), tc.namespace, tc.w))
			o := v.Verify(ctx, host+"/app:ecdsa-tag", r)
			switch {
			case tc.want == "" && (!o.Verified || o.Err != nil):
				t.Fatalf("%+v, want verified", o)
			case tc.want != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), tc.want)):
				t.Fatalf("%+v, want an error containing %q", o, tc.want)
			}
		})
	}
	// From the cache, no Secret is read.
	v := New(Options{})
	w := Workload{PullSecrets: []string{"regcred"}}
	if o := v.Verify(WithKeychain(context.Background(), creds(context.Background(), "shop", w)), host+"/app:ecdsa-tag", r); !o.Verified {
		t.Fatalf("%+v", o)
	}
	client.ClearActions()
	if o := v.Verify(WithKeychain(context.Background(), creds(context.Background(), "shop", w)), host+"/app:ecdsa-tag", r); !o.Cached {
		t.Fatalf("%+v, want the cache's answer", o)
	}
	if got := client.Actions(); len(got) != 0 {
		t.Errorf("the cache answered, yet %d API calls were made: %v", len(got), got)
	}
}
