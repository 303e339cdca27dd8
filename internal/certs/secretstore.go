package certs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// SecretStore keeps a self-managed authority in a Secret. Every replica
// serves the certificate the Secret holds (Watch); only the leader changes it
// (Rotate), so replicas never race to issue certificates.
type SecretStore struct {
	Served
	Client    kubernetes.Interface
	Namespace string
	Name      string
	Config    AuthorityConfig
	Log       *slog.Logger
	// OnBundle is called with the CA bundle whenever it changes.
	OnBundle func(bundle []byte)

	mu     sync.Mutex
	bundle []byte
	synced func() bool
}

// CABundle returns the CAs the apiserver must trust, nil before the first read.
func (s *SecretStore) CABundle() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.bundle)
}

// Start follows the Secret until ctx ends, serving what it holds.
func (s *SecretStore) Start(ctx context.Context) {
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 10*time.Minute,
		informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.Name).String()
		}))
	inf := factory.Core().V1().Secrets().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.take(obj) },
		UpdateFunc: func(_, obj any) { s.take(obj) },
	})
	s.synced = inf.HasSynced
	factory.Start(ctx.Done())
}

// Refresh reads the Secret itself, every interval, while the certificate it
// serves is due for renewal: the watch alone can lag a renewal by half a
// minute after the apiserver was away (client-go backs off its retries), and
// the certificate may expire meanwhile. Outside that window it costs nothing.
func (s *SecretStore) Refresh(ctx context.Context, interval time.Duration) {
	_ = wait.PollUntilContextCancel(ctx, interval, false, func(ctx context.Context) (bool, error) {
		if leaf := s.Leaf(); leaf != nil && !DueForRenewal(leaf, time.Now()) {
			return false, nil
		}
		sec, err := s.Client.CoreV1().Secrets(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			s.Log.Debug("certificate Secret not read", slog.Any("error", err))
			return false, nil
		}
		s.take(sec)
		return false, nil
	})
}

func (s *SecretStore) take(obj any) {
	sec, ok := obj.(*corev1.Secret)
	if !ok || sec.Name != s.Name {
		return
	}
	changed, err := s.Set(sec.Data[SecretTLSCert], sec.Data[SecretTLSKey])
	switch {
	case err != nil:
		s.Log.Warn("certificate Secret holds no usable serving pair; the previous one stays in use", slog.Any("error", err))
	case changed:
		leaf := s.Leaf()
		s.Log.Info("serving certificate loaded from Secret", slog.String("secret", s.Namespace+"/"+s.Name),
			slog.String("serial", leaf.SerialNumber.String()), slog.Time("notAfter", leaf.NotAfter))
	}
	s.mu.Lock()
	bundleChanged := !bytes.Equal(s.bundle, sec.Data[SecretCABundle])
	s.bundle = bytes.Clone(sec.Data[SecretCABundle])
	s.mu.Unlock()
	if bundleChanged && s.OnBundle != nil {
		s.OnBundle(sec.Data[SecretCABundle])
	}
}

// Rotate reconciles the Secret every interval until ctx ends: it creates the
// authority, renews at two thirds of a lifetime, and rotates the CA in two
// phases. Only the leader calls it.
func (s *SecretStore) Rotate(ctx context.Context, interval time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := s.reconcile(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.Log.Error("certificate Secret not reconciled", slog.Any("error", err))
		}
	}, interval)
}

func (s *SecretStore) reconcile(ctx context.Context, now time.Time) error {
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	sec, err := secrets.Get(ctx, s.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sec, err = &corev1.Secret{}, nil
	}
	if err != nil {
		return fmt.Errorf("get Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	data, reason, err := Reconcile(sec.Data, s.Config, now)
	if err != nil || reason == "" {
		return err
	}
	body, err := json.Marshal(&corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Name, Namespace: s.Namespace, ResourceVersion: sec.ResourceVersion,
			Labels: map[string]string{"app.kubernetes.io/name": "tollgate"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	})
	if err != nil {
		return err
	}
	// Server-side apply, carrying the resourceVersion read (none when
	// creating): if another writer got there first this fails rather than
	// overwrites, and the next tick starts again from what is stored.
	if _, err := secrets.Patch(ctx, s.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "tollgate", Force: &force}); err != nil {
		return fmt.Errorf("store Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	s.Log.Info("certificate Secret updated", slog.String("secret", s.Namespace+"/"+s.Name), slog.String("why", reason))
	return nil
}

var force = true

// Synced tells whether the Secret has been read once.
func (s *SecretStore) Synced() bool { return s.synced != nil && s.synced() }
