package imageverify

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	kauth "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	"k8s.io/client-go/kubernetes"
)

// Credentials give the registry credentials a workload's images are
// pulled with, in its namespace.
type Credentials func(ctx context.Context, namespace string, w Workload) authn.Keychain

type keychainKey struct{}

// WithKeychain makes a Verifier reach registries, for calls under ctx,
// with kc before its own keychain.
func WithKeychain(ctx context.Context, kc authn.Keychain) context.Context {
	return context.WithValue(ctx, keychainKey{}, kc)
}

func keychainOf(ctx context.Context) authn.Keychain {
	kc, _ := ctx.Value(keychainKey{}).(authn.Keychain)
	return kc
}

// PullSecrets are the credentials the kubelet would use: the workload's
// imagePullSecrets and its ServiceAccount's, read by name from the
// cluster (go-containerregistry's Kubernetes keychain; Secrets or a
// ServiceAccount that do not exist are skipped, as the kubelet does).
// They are read only when a registry is asked, not when the cache answers.
func PullSecrets(client kubernetes.Interface) Credentials {
	return func(ctx context.Context, namespace string, w Workload) authn.Keychain {
		return &lazyKeychain{load: func() (authn.Keychain, error) {
			kc, err := kauth.New(ctx, client, kauth.Options{Namespace: namespace, ServiceAccountName: w.ServiceAccount, ImagePullSecrets: w.PullSecrets})
			if err != nil {
				return nil, fmt.Errorf("reading the pull credentials of namespace %s: %w", namespace, err)
			}
			return kc, nil
		}}
	}
}

// lazyKeychain loads its keychain the first time a registry asks.
type lazyKeychain struct {
	load func() (authn.Keychain, error)
	once sync.Once
	kc   authn.Keychain
	err  error
}

func (l *lazyKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	l.once.Do(func() { l.kc, l.err = l.load() })
	if l.err != nil {
		return nil, l.err
	}
	return l.kc.Resolve(r)
}
